-- release: P.claim_uid: every GPU and MIG device of that k8s claim, its
-- claim keys, and each shared parent it was the last claim of;
-- else those of P.ids held by P.user with a type in P.types (as
-- canhazgpu's, the others are left as they are and listed in notheld);
-- else every reservation of P.user with a type in P.types. With P.since
-- (a start time per id: the caller's own reservations), only those that
-- started then are P.user's: the others were lost to a later one.
if isnil(P.claim_uid) and (isnil(P.user) or isnil(P.types)) then
  return result({error = 'param', why = 'claim_uid, or user and types, needed'})
end
local n, why = gpu_count()
if not n then return result({error = why}) end
local types = set_of(P.types)
local out = {notheld = {}}
if not isnil(P.claim_uid) then
  local raws = gets(n)
  for i = 0, n - 1 do
    local st = sload(i, raws[i])
    if held(st) and st.type == 'k8s' and st.claim_uid == P.claim_uid then release(st) end
  end
  release_claim_mig(P.claim_uid)
  local c = PFX .. 'k8s:claim:' .. P.claim_uid
  for _, id in ipairs(redis.call('SMEMBERS', c .. ':gpus')) do
    redis.call('DEL', c .. ':gpu:' .. id)
  end
  redis.call('DEL', c .. ':gpus')
elseif type(P.ids) == 'table' then
  for _, id in ipairs(P.ids) do
    if id < 0 or id >= n then return result({error = 'range', gpu = id, count = n}) end
  end
  local mine = {}
  for k, id in ipairs(P.ids) do
    local st = sload(id)
    local since = P.since and P.since[k]
    if held(st) and st.user == P.user and types[st.type] and
        (not since or (st.start_time and st.start_time[1] == since)) then
      mine[#mine + 1] = st
    else
      out.notheld[#out.notheld + 1] = {gpu = id, holder = st.user or NULL,
        type = st.type or NULL, bad = st.bad or NULL,
        since = st.start_time and st.start_time[1] or NULL}
    end
  end
  for _, st in ipairs(mine) do release(st) end
else
  local raws = gets(n)
  for i = 0, n - 1 do
    local st = sload(i, raws[i])
    if held(st) and st.user == P.user and types[st.type] then release(st) end
  end
end
return result(out)
