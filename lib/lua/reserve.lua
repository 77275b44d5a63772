-- reserve: P.count GPUs, or exactly P.ids, for P.user; type P.type;
-- P.duration (manual: seconds until it expires), P.note, P.claim_uid (k8s, with P.namespace and
-- P.pod); P.unreserved: ids in use without a reservation, skipped.
-- As canhazgpu's, a new request does not look at the queue: what is
-- free now is taken, whoever waits.
if isnil(P.user) or not TYPES[P.type] or (isnil(P.count) and isnil(P.ids)) then
  return result({error = 'param', why = 'user, type and count or ids needed'})
end
return with_pool(function(n)
  local unres = set_of(P.unreserved)
  if type(P.ids) == 'table' then
    for _, id in ipairs(P.ids) do
      if id < 0 or id >= n then return result({error = 'range', gpu = id, count = n}) end
    end
  end
  queue_cleanup(n)
  local sts = cleanup(n)
  local expiry = NULL
  if P.type == 'manual' and not isnil(P.duration) then
    expiry = NOW + math.floor(P.duration)
  end
  local chosen = {}
  if type(P.ids) == 'table' then
    for _, id in ipairs(P.ids) do
      local st = sts[id]
      if st.bad then return result({error = 'bad', gpu = id, why = st.bad}) end
      if not st.free then return result({error = 'taken', gpu = id, user = st.user}) end
      if unres[id] then return result({error = 'unreserved', gpu = id}) end
      chosen[#chosen + 1] = id
    end
  else
    local cands, skipped = {}, 0
    for i = 0, n - 1 do
      if sts[i].free then
        if unres[i] then skipped = skipped + 1 else cands[#cands + 1] = sts[i] end
      end
    end
    if #cands < P.count then
      return result({error = 'notenough', available = #cands, unreserved = skipped})
    end
    order(cands, P.user)
    for i = 1, P.count do chosen[i] = cands[i].id end
  end
  local infos = {}
  for _, id in ipairs(chosen) do
    redis.call('SET', gkey(id), fresh(P.user, P.actual_user, P.type, expiry, P.note, P.claim_uid))
    infos[#infos + 1] = {gpu = id, user = P.user, actual_user = P.actual_user,
      type = P.type, claim_uid = P.claim_uid, since = NOW, expires = expiry,
      note = (not isnil(P.note) and P.note ~= '') and P.note or NULL}
    if P.type == 'k8s' then
      local c = PFX .. 'k8s:claim:' .. P.claim_uid
      redis.call('SADD', c .. ':gpus', int(id))
      local ri = '{"claim_uid":' .. js(P.claim_uid) .. ',"namespace":' .. js(P.namespace)
      if not isnil(P.pod) then ri = ri .. ',"pod_name":' .. js(P.pod) end
      redis.call('SET', c .. ':gpu:' .. int(id), ri .. ',"reserved_at":' .. js(NOWSTR) .. '}')
    end
  end
  return result({ok = infos})
end)
