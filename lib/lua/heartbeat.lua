-- heartbeat: refresh last_heartbeat of the run reservations P.ids that
-- P.user holds, written as canhazgpu's Go heartbeat writes them; with
-- P.since (a start time per id), only the reservations that started
-- then: the ones the caller made, not a later one of the same user.
if isnil(P.user) or isnil(P.ids) then
  return result({error = 'param', why = 'user and ids needed'})
end
local n, why = gpu_count()
if not n then return result({error = why}) end
local out = {ok = {}, lost = {}}
for _, id in ipairs(P.ids) do
  if id < 0 or id >= n then return result({error = 'range', gpu = id, count = n}) end
end
for k, id in ipairs(P.ids) do
  local st = sload(id)
  local since = P.since and P.since[k]
  if held(st) and st.user == P.user and st.type == 'run' and
      (not since or (st.start_time and st.start_time[1] == since)) then
    st.last_heartbeat = {NOW, NS, OFF}
    redis.call('SET', gkey(id), gostate(st))
    out.ok[#out.ok + 1] = info(st)
  else
    out.lost[#out.lost + 1] = {gpu = id, holder = st.user or NULL, bad = st.bad or NULL,
      since = st.start_time and st.start_time[1] or NULL}
  end
end
return result(out)
