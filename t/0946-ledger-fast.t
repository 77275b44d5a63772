#!/bin/sh
# The ledger's Lua reads quickly what it reads often, and reads it as the
# slow way does: jflat (the shapes every writer makes, found valid by a
# few patterns) never passes what jwalk (the byte walk) refuses, and
# order (MRU scores by ZSCORE) gives canhazgpu's order as reading all
# 100 scores does, on random histories with ties, spaces, escapes and
# names that need decoding.
. "$(dirname "$0")/lib.sh"

start_redis
P='{"now":1795000000,"ns":0,"off":0,"token":"t"}'
probe() { unit ledger-verdict "$REDIS" 1795000000 -e "$PWD/$1" "$P"; }

# one value a line: flat (jflat passes it) or walk, then jwalk's verdict
cat >values <<'EOF'
{}
{"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-28T12:41:09.706006299Z"}
{"user":"bob","actual_user":"bob","start_time":1795000000,"type":"manual","expiry_time":1795003600,"note":"a note, {with} [brackets]: and = signs"}
{"id":"q1","user":"a","actual_user":"","requested_count":2,"requested_ids":[0,1],"allocated_gpus":[],"reservation_type":"run"}
{"a":-0,"b":true,"c":false,"d":"","":1}
{"a":123456789012345678}
{"a":1234567890123456789}
{"a":01}
{"a":[01]}
{"a":1.5}
{"a":1e5}
{"a":-}
{"a":--1}
{"a":nul}
{"a":nullnull}
{"a":1null}
{"a":=}
{"a":"b","c":"}
{"a":"b"
{"a":"b"}x
{"a":1,}
{,"a":1}
{"a"}
{"a":1 }
{ "a":1}
{"a":[1,]}
{"a":[,1]}
{"a":[[1]]}
{"a":["x"]}
{"a":{}}
{"a":"tab	in"}
{"a":"back\\slash"}
[1]
"s"
EOF
cat >flat.lua <<'EOF'
local out = {}
for _, v in ipairs(cjson.decode(P.vals)) do
  out[#out + 1] = (jflat(v) and 'flat ' or 'walk ') .. (jwalk(v) or 'ok')
end
return table.concat(out, '\n')
EOF
P=$(jq -cR -s --argjson p "$P" '$p + {vals: (split("\n")[:-1] | tojson)}' values)
check_output 'jflat passes the writers'"'"' shapes, and nothing jwalk refuses' 'probe flat.lua' <<'EOF2'
flat ok
flat ok
flat ok
flat ok
flat ok
flat ok
walk ok
walk not JSON
walk not JSON
walk ok
walk ok
walk not JSON
walk not JSON
walk not JSON
walk not JSON
walk not JSON
walk not JSON
walk not JSON
walk not JSON
walk not JSON
walk not JSON
walk not JSON
walk not JSON
walk ok
walk ok
walk not JSON
walk not JSON
walk ok
walk ok
walk ok
walk not JSON
walk ok
walk ok
walk ok
EOF2
# the most values an object may hold (MAXVALUES 256, names counted): 127
# members and the object are 255, 128 are 257
cat >count.lua <<'EOF'
local function obj(n)
  local m = {}
  for i = 1, n do m[i] = '"k' .. i .. '":1' end
  return '{' .. table.concat(m, ',') .. '}'
end
local out = {}
for _, n in ipairs({127, 128}) do
  out[#out + 1] = n .. ' ' .. (jflat(obj(n)) and 'flat ' or 'walk ') .. (jwalk(obj(n)) or 'ok')
end
return table.concat(out, '\n')
EOF
P='{"now":1795000000,"ns":0,"off":0,"token":"t"}'
check_output 'jflat counts values as jwalk does' 'probe count.lua' <<'EOF2'
127 flat ok
128 walk more than 256 values
EOF2

# order against the way before it (all 100 scores read as text), on 300
# random histories of 150 records: scores tied, names with a space
# after the colon, escaped, or needing decoding, GPU ids past the pool
cat >order.lua <<'EOF'
local function ref_order(cands, user)
  local mru = {}
  local h = redis.call('ZREVRANGE', HIST, 0, 99, 'WITHSCORES')
  -- a record without "user":"<user>" (with or without a space) is not
  -- the user's, when the name needs no escaping: no need to decode it
  local plain = user:match('^[%w%-_.@:]+$') ~= nil
  local a, b = '"user":"' .. user .. '"', '"user": "' .. user .. '"'
  for i = 1, #h, 2 do
    local id
    if plain and (h[i]:find(a, 1, true) or h[i]:find(b, 1, true)) then
      id = tonumber(h[i]:match('"gpu_id":%s*(%d+)[,}]'))
    end
    if not plain or (id == nil and h[i]:find(user, 1, true)) then
      local ok, r = pcall(cjson.decode, h[i])
      if ok and type(r) == 'table' and r.user == user and type(r.gpu_id) == 'number' then
        id = r.gpu_id
      end
    end
    if id then
      local sc = tonumber(h[i + 1])
      if not mru[id] or sc > mru[id] then mru[id] = sc end
    end
  end
  for _, c in ipairs(cands) do
    c.mru = mru[c.id] or 0
    c.rough = rough(c.lr)
  end
  table.sort(cands, function(a, b)
    if a.mru > 0 and b.mru > 0 then return a.mru > b.mru end
    if a.mru > 0 then return true end
    if b.mru > 0 then return false end
    return a.rough < b.rough
  end)
end
local seed = 12345
local function rnd(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
end
local USERS = {'alice', 'bob', 'al', 'a b', 'x<y', 'caf\195\169', 'alice2'}
local function rec(u, id)
  local name = cjson.encode(u)
  if u == 'x<y' and rnd(2) == 0 then name = '"x\\u003cy"' end
  if u == 'alice' and rnd(4) == 0 then name = '"\\u0061lice"' end
  local sep = rnd(3) == 0 and ': ' or ':'
  return '{"user"' .. sep .. name .. ',"gpu_id"' .. sep .. id .. ',"n":' .. rnd(1000000) .. '}'
end
local trials, differ = 300, 0
for t = 1, trials do
  redis.call('DEL', HIST)
  for i = 1, 150 do
    redis.call('ZADD', HIST, 1794000000 + rnd(40) * (rnd(2) == 0 and 1 or 1000), rec(USERS[rnd(#USERS) + 1], rnd(10)))
  end
  local user = USERS[rnd(#USERS) + 1]
  local a, b = {}, {}
  for id = 0, 7 do
    local lr = rnd(3) == 0 and NULL or string.format('2026-11-%02dT00:00:00Z', 1 + rnd(3))
    a[#a + 1] = {id = id, lr = lr}
    b[#b + 1] = {id = id, lr = lr}
  end
  order(a, user)
  ref_order(b, user)
  for k = 1, #a do
    if a[k].id ~= b[k].id then differ = differ + 1; break end
  end
end
redis.call('DEL', HIST)
return 'trials ' .. trials .. ', differ ' .. differ
EOF
check_output 'order gives the order all 100 scores give' 'probe order.lua' <<'EOF2'
trials 300, differ 0
EOF2
done_testing
