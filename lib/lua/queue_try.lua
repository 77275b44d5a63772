-- queue_try: when entry P.qid heads the queue, take free GPUs for it
-- (greedily, lowest ids first; P.unreserved skipped) marked with its
-- id; once it has all it asked for, the reservation is final and the
-- entry leaves the queue: done = the ids. Else waiting = what it holds,
-- position = its place.
return with_pool(function(n)
  queue_cleanup(n)
  local sts = cleanup(n)
  local raw = redis.call('GET', qkey(P.qid))
  local rank = redis.call('ZRANK', QUEUE, P.qid)
  if not raw or not rank then return result({gone = true}) end
  local mine = {}
  for i = 0, n - 1 do
    if held(sts[i]) and sts[i].partial_queue_id == P.qid then mine[#mine + 1] = sts[i] end
  end
  if rank > 0 then return result({waiting = #mine, position = rank + 1}) end
  -- the head was judged readable by queue_cleanup just now
  local e = cjson.decode(raw)
  local dur = type(e.expiry_duration) == 'number' and e.expiry_duration / 1e9 or nil
  local function take(st)
    st.last_heartbeat = {NOW, NS, OFF}
    if e.reservation_type == 'manual' and dur then
      st.expiry_time = {NOW + math.floor(dur), 0, OFF}
    end
    redis.call('SET', gkey(st.id), gostate(st))
  end
  -- refreshed every 30 s, not at each try: a write wakes the waiters
  for _, st in ipairs(mine) do
    if not st.last_heartbeat or NOW - st.last_heartbeat[1] >= 30 then take(st) end
  end
  local need = e.requested_count - #mine
  local unres = set_of(P.unreserved)
  local cands = {}
  if type(e.requested_ids) == 'table' and #e.requested_ids > 0 then
    for _, id in ipairs(e.requested_ids) do
      if id >= 0 and id < n and sts[id].free and not unres[id] then cands[#cands + 1] = sts[id] end
    end
  else
    -- the lowest free ids, as canhazgpu's waiter takes them
    for i = 0, n - 1 do
      if sts[i].free and not unres[i] then cands[#cands + 1] = sts[i] end
    end
  end
  for k = 1, math.min(need, #cands) do
    local st = {id = cands[k].id, user = e.user, actual_user = e.actual_user,
      start_time = {NOW, NS, OFF}, type = e.reservation_type,
      note = type(e.note) == 'string' and e.note or nil, partial_queue_id = P.qid}
    take(st)
    mine[#mine + 1] = st
  end
  local ids = {}
  for k, st in ipairs(mine) do ids[k] = st.id end
  table.sort(ids)
  if #mine < e.requested_count then
    e.allocated_gpus = ids
    redis.call('SET', qkey(P.qid), enc_entry(e))
    return result({waiting = #mine, position = 1})
  end
  local infos = {}
  table.sort(mine, function(a, b) return a.id < b.id end)
  for _, st in ipairs(mine) do
    st.partial_queue_id = nil
    if e.reservation_type == 'manual' and dur then
      st.expiry_time = {NOW + math.floor(dur), 0, OFF}
    end
    redis.call('SET', gkey(st.id), gostate(st))
    infos[#infos + 1] = info(st)
  end
  redis.call('ZREM', QUEUE, P.qid)
  redis.call('DEL', qkey(P.qid))
  return result({done = infos})
end)
