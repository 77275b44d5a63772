-- queue_cancel: take entry P.qid out of the queue and free the GPUs it
-- holds, with their usage records.
local n = gpu_count()
if n then release_partials(P.qid, n) end
redis.call('ZREM', QUEUE, P.qid)
redis.call('DEL', qkey(P.qid))
return result({})
