-- queue_heartbeat: refresh the heartbeat of queue entry P.qid; gone = 1
-- when it is no longer queued.
local raw = redis.call('GET', qkey(P.qid))
if not raw or not redis.call('ZSCORE', QUEUE, P.qid) then return result({gone = true}) end
if ejudge(raw) then return result({gone = true}) end
local e = cjson.decode(raw)
e.last_heartbeat = NOWSTR
redis.call('SET', qkey(P.qid), enc_entry(e))
return result({})
