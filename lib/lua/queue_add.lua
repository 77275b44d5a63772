-- queue_add: enqueue P.entry (its id, user, actual_user, requested_count,
-- requested_ids, reservation_type, expiry_duration, note, wait_timeout)
-- at score P.score, as canhazgpu's AddToQueue does (ZADD and SET).
local e = P.entry
if redis.call('ZCARD', QUEUE) >= MAXQUEUE then
  return result({error = 'queuefull', queued = redis.call('ZCARD', QUEUE)})
end
e.allocated_gpus = {}
e.enqueue_time = NOWSTR
e.last_heartbeat = NOWSTR
if not isnil(e.wait_s) then e.wait_timeout = tfmt(NOW + math.floor(e.wait_s), NS, OFF) end
-- after every entry already queued, whatever the clocks say (the
-- doubles near 1.8e18 are 256 apart)
local score = tonumber(P.score)
local tail = redis.call('ZRANGE', QUEUE, -1, -1, 'WITHSCORES')
if tail[2] and tonumber(tail[2]) >= score then score = tonumber(tail[2]) + 512 end
redis.call('ZADD', QUEUE, string.format('%.0f', score), e.id)
redis.call('SET', qkey(e.id), enc_entry(e))
return result({position = redis.call('ZRANK', QUEUE, e.id) + 1})
