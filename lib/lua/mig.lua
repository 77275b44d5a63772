-- The MIG model. A claim's MIG device on GPU g holds g with the shared
-- hold (user k8s:mig, type k8s, no claim_uid); k8s:gpu:<g>:claims is the
-- set of the claims using g's MIG devices, k8s:mig:<uuid> the claim of a
-- device, k8s:claim:<uid>:mig the hash of a claim's devices (uuid: g).
-- Its k8s:claim:<uid>:gpus and :gpu:<g> are written as for whole GPUs.
local MIGUSER = 'k8s:mig'

local function shared(st)
  return held(st) and st.type == 'k8s' and st.user == MIGUSER and not st.claim_uid
end

local function ckey(uid)
  return PFX .. 'k8s:claim:' .. uid
end

local function gclaims(g)
  return PFX .. 'k8s:gpu:' .. int(g) .. ':claims'
end

local function mkey(uuid)
  return PFX .. 'k8s:mig:' .. uuid
end

-- claim_info adds g to claim uid's GPUs with its info key (ns, pod);
-- an info key there already is kept unless force.
local function claim_info(uid, g, ns, pod, force)
  local ri = '{"claim_uid":' .. js(uid) .. ',"namespace":' .. js(ns)
  if not isnil(pod) then ri = ri .. ',"pod_name":' .. js(pod) end
  ri = ri .. ',"reserved_at":' .. js(NOWSTR) .. '}'
  local k = ckey(uid) .. ':gpu:' .. int(g)
  if force then redis.call('SET', k, ri) else redis.call('SET', k, ri, 'NX') end
  redis.call('SADD', ckey(uid) .. ':gpus', int(g))
end

-- claim_since is when claim uid's info key for g says it was reserved
-- (unix seconds), or null.
local function claim_since(uid, g)
  local raw = redis.call('GET', ckey(uid) .. ':gpu:' .. int(g))
  if not raw then return NULL end
  local ok, j = pcall(cjson.decode, raw)
  if not ok or type(j) ~= 'table' then return NULL end
  local t = tparse(j.reserved_at)
  return t and t[1] or NULL
end

-- mig_info is the reservation info of claim uid's MIG device uuid on g.
local function mig_info(uid, g, uuid)
  return {gpu = g, mig = uuid, user = MIGUSER, actual_user = 'k8s',
    type = 'k8s', claim_uid = uid, since = claim_since(uid, g),
    expires = NULL, heartbeat = NULL, note = NULL, queue_id = NULL}
end

-- take_mig gives claim uid the MIG device uuid on GPU g, whose state st
-- is free (the shared hold is taken) or shared. Returns g's state and
-- whether anything was taken anew.
local function take_mig(st, uid, g, uuid, ns, pod)
  local new = false
  if st.free then
    redis.call('SET', gkey(g), fresh(MIGUSER, 'k8s', 'k8s', nil, nil, nil))
    st = {id = g, user = MIGUSER, actual_user = 'k8s', type = 'k8s',
      start_time = {NOW, 0}}
    new = true
  end
  redis.call('SADD', gclaims(g), uid)
  if redis.call('SET', mkey(uuid), uid, 'NX') then new = true end
  redis.call('HSETNX', ckey(uid) .. ':mig', uuid, int(g))
  claim_info(uid, g, ns, pod, false)
  return st, new
end

-- mig_of lists claim uid's MIG devices as {g, uuid}, by g then uuid.
local function mig_of(uid)
  local h = redis.call('HGETALL', ckey(uid) .. ':mig')
  local out = {}
  for i = 1, #h, 2 do out[#out + 1] = {g = tonumber(h[i + 1]), uuid = h[i]} end
  table.sort(out, function(a, b)
    if a.g ~= b.g then return a.g < b.g end
    return a.uuid < b.uuid
  end)
  return out
end

-- drop_mig takes MIG device d ({g, uuid}) from claim uid, with its
-- release info; its parent is left to leave_gpu.
local function drop_mig(uid, d)
  released[#released + 1] = mig_info(uid, d.g, d.uuid)
  if redis.call('GET', mkey(d.uuid)) == uid then redis.call('DEL', mkey(d.uuid)) end
  redis.call('HDEL', ckey(uid) .. ':mig', d.uuid)
end

-- leave_gpu takes claim uid off GPU g (state st, read when nil): off g's
-- claims, g off its GPUs; then frees g's shared hold, with its usage
-- record, when no claim is left. Returns g's state.
local function leave_gpu(uid, g, st)
  st = st or sload(g)
  redis.call('SREM', gclaims(g), uid)
  if not (held(st) and st.claim_uid == uid) then
    redis.call('DEL', ckey(uid) .. ':gpu:' .. int(g))
    redis.call('SREM', ckey(uid) .. ':gpus', int(g))
  end
  if shared(st) and redis.call('SCARD', gclaims(g)) == 0 then return release(st) end
  return st
end

-- release_claim_mig frees every MIG device of claim uid and each shared
-- parent it was the last claim of.
local function release_claim_mig(uid)
  local devs = mig_of(uid)
  for k, d in ipairs(devs) do
    drop_mig(uid, d)
    if not devs[k + 1] or devs[k + 1].g ~= d.g then leave_gpu(uid, d.g) end
  end
  redis.call('DEL', ckey(uid) .. ':mig')
  for _, g in ipairs(redis.call('SMEMBERS', ckey(uid) .. ':gpus')) do
    if redis.call('SISMEMBER', gclaims(g), uid) == 1 then leave_gpu(uid, tonumber(g)) end
  end
end

-- sync_shared makes shared hold st (GPU g) match the MIG devices wanted
-- (wantmig[uid][uuid]): every other device of a claim not in keep is
-- dropped, the hold freed when no claim is left. Returns g's state.
local function sync_shared(st, g, wantmig, keep)
  local members = redis.call('SMEMBERS', gclaims(g))
  table.sort(members)
  if #members == 0 then return release(st) end
  for _, uid in ipairs(members) do
    if not keep[uid] then
      local left = false
      for _, d in ipairs(mig_of(uid)) do
        if d.g == g then
          if wantmig[uid] and wantmig[uid][d.uuid] then left = true else drop_mig(uid, d) end
        end
      end
      if not left then st = leave_gpu(uid, g, st) end
    end
  end
  return st
end
