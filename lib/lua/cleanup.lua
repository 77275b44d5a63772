-- cleanup: drop stale queue entries (freeing their GPUs), then free
-- stale and expired reservations, each with its usage record.
local n, why = gpu_count()
if not n then return result({error = why}) end
queue_cleanup(n)
cleanup(n)
return result({})
