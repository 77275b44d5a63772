#!/bin/sh
# The ledger's Lua reads quickly what it reads often, and reads it as the
# slow way does: jflat (the shapes every writer makes, found valid by a
# few patterns) never passes what jwalk (the byte walk) refuses, and
# order (MRU scores by ZSCORE) gives canhazgpu's order as reading all
# 100 scores does, on random histories with ties, spaces, escapes and
# names that need decoding; tparse's byte reading of the writers' form
# of time gives what its one pattern gives.
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
  local nl = rnd(8) == 0 and ',"z":"a\nb"' or ''
  return '{"user"' .. sep .. name .. ',"gpu_id"' .. sep .. id .. nl .. ',"n":' .. rnd(1000000) .. '}'
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
# tparse, and tvalid (tparse's verdict alone), against the way before
# tparse's fast path (every RFC 3339 time taken apart by one pattern and
# tonumber), on edge cases and 3,000 random times: fractions of 0 to 12
# digits, t and z, offsets, days and months out of range, leap days,
# bytes that are not digits, a byte short or over
cat >times.lua <<'EOF'
local function ref_tparse(v)
  if isnil(v) then return nil end
  if type(v) == 'number' then
    if v ~= v or v == math.huge or v == -math.huge then return false end
    return inrange({trunc(v), 0})
  end
  if type(v) ~= 'string' then return false end
  if v:match('^%-?%d+$') or v:match('^%-?%d+%.%d+$') then
    return inrange({trunc(tonumber(v)), 0})
  end
  local y, mo, d, h, mi, s, rest =
    v:match('^(%d%d%d%d)%-(%d%d)%-(%d%d)[Tt](%d%d):(%d%d):(%d%d)(.*)$')
  if not y then return false end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  h, mi, s = tonumber(h), tonumber(mi), tonumber(s)
  local ns = 0
  local f = rest:match('^%.(%d+)')
  if f then
    rest = rest:sub(#f + 2)
    ns = tonumber((f .. '00000000'):sub(1, 9))
  end
  local off
  if rest == 'Z' or rest == 'z' then
    off = 0
  else
    local sg, oh, om = rest:match('^([+-])(%d%d):(%d%d)$')
    if not sg then return false end
    off = tonumber(oh) * 3600 + tonumber(om) * 60
    if sg == '-' then off = -off end
    if tonumber(oh) > 23 or tonumber(om) > 59 then return false end
  end
  if mo < 1 or mo > 12 or d < 1 or d > MDAYS[mo] or h > 23 or mi > 59 or s > 59 then
    return false
  end
  if mo == 2 and d == 29 and not (y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0)) then
    return false
  end
  return inrange({dfc(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - off, ns, off})
end
local function show(t)
  if t == nil then return 'nil' end
  if t == false then return 'false' end
  return t[1] .. '/' .. t[2] .. '/' .. tostring(t[3])
end
local seed = 4242
local function rnd(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
end
local function two(hi) return string.format('%02d', rnd(hi)) end
local DIG = '0123456789'
local cases = {'2026-11-29T14:44:40.53890666Z', '2026-11-29T14:44:40Z', '2026-11-29T14:44:40.Z',
  '2026-11-29T14:44:40.1234567891Z', '2026-11-29t14:44:40.5z', '2024-02-29T00:00:00Z',
  '2025-02-29T00:00:00Z', '2100-02-29T00:00:00.000000001Z', '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999999999Z', '2026-00-10T00:00:00Z', '2026-13-10T00:00:00Z',
  '2026-04-31T00:00:00Z', '2026-11-29T24:00:00Z', '2026-11-29T23:60:00Z', '2026-11-29T23:00:60Z',
  '2026-1a-29T14:44:40Z', '2026-11-29T14:44:40', '2026-11-29T14:44:40.5+01:00',
  '2026-11-29T14:44:4Z', '2026-11-29 14:44:40Z', '+026-11-29T14:44:40Z', '1795000000', '-5.5',
  '1969-12-31T23:59:59.999999999Z', '1970-01-01T00:00:00Z', '1970-01-01T00:59:59+01:00',
  '9999-12-31T23:59:59-00:01'}
local differ, fast, out = 0, 0, {}
for _, v in ipairs(cases) do
  local a, b = tparse(v), ref_tparse(v)
  out[#out + 1] = v .. ' ' .. show(a) .. (show(a) == show(b) and '' or ' DIFFERS ' .. show(b)) ..
    (tvalid(v) == (b ~= false) and '' or ' TVALID DIFFERS')
end
for t = 1, 3000 do
  local v = string.format('%04d-%s-%sT%s:%s:%s', rnd(10000), two(14), two(33), two(26), two(62), two(62))
  local nf = rnd(13)
  if nf > 0 then
    v = v .. '.'
    for k = 1, nf - 1 do local j = rnd(10) + 1; v = v .. DIG:sub(j, j) end
  end
  local z = rnd(20)
  v = v .. (z == 0 and 'z' or z == 1 and '+05:30' or z == 2 and '' or 'Z')
  if rnd(30) == 0 then
    local j = rnd(#v) + 1
    v = v:sub(1, j - 1) .. ({'x', '-', ':', '.', ' '})[rnd(5) + 1] .. v:sub(j + 1)
  end
  if show(tparse(v)) ~= show(ref_tparse(v)) or tvalid(v) ~= (ref_tparse(v) ~= false) then
    differ = differ + 1
  end
  if (#v == 20 and v:find(UTC0)) or (#v >= 22 and #v <= 30 and v:find(UTCF)) then fast = fast + 1 end
end
out[#out + 1] = 'random 3000, by the fast path ' .. fast .. ', differ ' .. differ
return table.concat(out, '\n')
EOF
check_output 'tparse reads every time as the one pattern did, fast path or not' 'probe times.lua' <<'EOF2'
2026-11-29T14:44:40.53890666Z 1795963480/538906660/0
2026-11-29T14:44:40Z 1795963480/0/0
2026-11-29T14:44:40.Z false
2026-11-29T14:44:40.1234567891Z 1795963480/123456789/0
2026-11-29t14:44:40.5z 1795963480/500000000/0
2024-02-29T00:00:00Z 1709164800/0/0
2025-02-29T00:00:00Z false
2100-02-29T00:00:00.000000001Z false
0000-01-01T00:00:00Z false
9999-12-31T23:59:59.999999999Z 253402300799/999999999/0
2026-00-10T00:00:00Z false
2026-13-10T00:00:00Z false
2026-04-31T00:00:00Z false
2026-11-29T24:00:00Z false
2026-11-29T23:60:00Z false
2026-11-29T23:00:60Z false
2026-1a-29T14:44:40Z false
2026-11-29T14:44:40 false
2026-11-29T14:44:40.5+01:00 1795959880/500000000/3600
2026-11-29T14:44:4Z false
2026-11-29 14:44:40Z false
+026-11-29T14:44:40Z false
1795000000 1795000000/0/nil
-5.5 false
1969-12-31T23:59:59.999999999Z false
1970-01-01T00:00:00Z 0/0/0
1970-01-01T00:59:59+01:00 false
9999-12-31T23:59:59-00:01 false
random 3000, by the fast path 1667, differ 0
EOF2
done_testing
