-- The ledger's shared Lua: every script is this text followed by its own
-- body. ARGV[1] is a JSON object of parameters: now (unix seconds), ns
-- (nanoseconds), off (the client's UTC offset in seconds), token (ours
-- for the allocation lock) and the script's own. Every script returns one
-- JSON text (cjson.encode) that the client reads.
local P = cjson.decode(ARGV[1])
local NOW, NS, OFF = P.now, P.ns, P.off
local NULL = cjson.null
local PFX = 'canhazgpu:'
local HIST = PFX .. 'usage_history_sorted'
local LOCK = PFX .. 'allocation_lock'
local QUEUE = PFX .. 'queue'

local function isnil(v)
  return v == nil or v == NULL
end

-- days_from_civil / civil_from_days: H. Hinnant's calendar algorithms.
local function dfc(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = math.floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

local function cfd(z)
  z = z + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524)
    - math.floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  if m <= 2 then y = y + 1 end
  return y, m, d
end

local MDAYS = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

local function trunc(v)
  if v >= 0 then return math.floor(v) end
  return math.ceil(v)
end

-- inrange is t when it lies in the ledger's range of times (0 to
-- TIMEMAX, lg_time_ok's), else false: nothing outside it is a time.
local function inrange(t)
  if t[1] < 0 or t[1] > TIMEMAX then return false end
  return t
end

-- UTC0 and UTCF: RFC 3339 in UTC, without and with a fraction (to 9
-- digits: 20 and 22-30 bytes)
local UTC0 = '^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$'
local UTCF = '^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d%.%d+Z$'

-- tfields reads the fields of an RFC 3339 time (any offset and fraction):
-- year, month, day, hour, minute, second, nanoseconds, offset, unchecked;
-- nil when v has not that form. The form every writer uses (UTC, to 9
-- digits of fraction) is read from its bytes: no captures and no string
-- to number, as it is a free GPU's last_released at each load.
local function tfields(v)
  local n = #v
  if (n == 20 and v:find(UTC0)) or (n >= 22 and n <= 30 and v:find(UTCF)) then
    local y1, y2, y3, y4, _, m1, m2, _, d1, d2, _, h1, h2, _, i1, i2, _, s1, s2 =
      v:byte(1, 19)
    local ns = n > 20 and tonumber(v:sub(21, n - 1)) * 10 ^ (30 - n) or 0
    return y1 * 1000 + y2 * 100 + y3 * 10 + y4 - 53328, m1 * 10 + m2 - 528,
      d1 * 10 + d2 - 528, h1 * 10 + h2 - 528, i1 * 10 + i2 - 528,
      s1 * 10 + s2 - 528, ns, 0
  end
  local y, mo, d, h, mi, s, rest =
    v:match('^(%d%d%d%d)%-(%d%d)%-(%d%d)[Tt](%d%d):(%d%d):(%d%d)(.*)$')
  if not y then return nil end
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
    if not sg or tonumber(oh) > 23 or tonumber(om) > 59 then return nil end
    off = tonumber(oh) * 3600 + tonumber(om) * 60
    if sg == '-' then off = -off end
  end
  return tonumber(y), tonumber(mo), tonumber(d), tonumber(h), tonumber(mi),
    tonumber(s), ns, off
end

-- tcheck: a month, day (leap days too), hour, minute and second in range
local function tcheck(y, mo, d, h, mi, s)
  if mo < 1 or mo > 12 or d < 1 or d > MDAYS[mo] or h > 23 or mi > 59 or s > 59 then
    return false
  end
  return not (mo == 2 and d == 29 and not (y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0)))
end

-- tparse reads a time as canhazgpu's FlexibleTime does: a JSON number of
-- seconds (fraction dropped), a numeric string, or RFC 3339 with any
-- offset and fraction. Returns nil for absent or null, false for anything
-- else, or {seconds, nanoseconds, offset} (offset nil for numbers).
local function tparse(v)
  if isnil(v) then return nil end
  if type(v) == 'number' then
    if v ~= v or v == math.huge or v == -math.huge then return false end
    return inrange({trunc(v), 0})
  end
  if type(v) ~= 'string' then return false end
  if v:match('^%-?%d+$') or v:match('^%-?%d+%.%d+$') then
    return inrange({trunc(tonumber(v)), 0})
  end
  local y, mo, d, h, mi, s, ns, off = tfields(v)
  if not y or not tcheck(y, mo, d, h, mi, s) then return false end
  return inrange({dfc(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - off, ns, off})
end

-- tvalid is tparse(v) ~= false for a string, without making the time: a
-- time in UTC is in range from 1970 on (four digits end before TIMEMAX)
local function tvalid(v)
  local y, mo, d, h, mi, s, _, off = tfields(v)
  if y and off == 0 then return y >= 1970 and tcheck(y, mo, d, h, mi, s) end
  return tparse(v) ~= false
end

-- tfmt writes a time as Go's RFC3339Nano in the offset off (the client's
-- when nil): fraction without trailing zeros, Z for offset 0.
local function tfmt(sec, ns, off)
  off = off or OFF
  local t = sec + off
  local days = math.floor(t / 86400)
  local rem = t - days * 86400
  local y, m, d = cfd(days)
  local s = string.format('%04d-%02d-%02dT%02d:%02d:%02d', y, m, d,
    math.floor(rem / 3600), math.floor(rem % 3600 / 60), rem % 60)
  if ns and ns > 0 then
    s = s .. (('.' .. string.format('%09d', ns)):gsub('0+$', ''))
  end
  if off == 0 then return s .. 'Z' end
  local a = math.abs(off)
  return s .. string.format('%s%02d:%02d', off < 0 and '-' or '+',
    math.floor(a / 3600), math.floor(a % 3600 / 60))
end

local NOWSTR = tfmt(NOW, NS, OFF)

-- js writes s as a JSON string the way Go's encoding/json does.
local ESC = {['"'] = '\\"', ['\\'] = '\\\\', ['\n'] = '\\n', ['\r'] = '\\r',
  ['\t'] = '\\t', ['\b'] = '\\b', ['\f'] = '\\f', ['<'] = '\\u003c',
  ['>'] = '\\u003e', ['&'] = '\\u0026'}
local function js(s)
  s = s:gsub('[%z\1-\31"\\<>&]', function(c)
    return ESC[c] or string.format('\\u%04x', c:byte())
  end)
  s = s:gsub('\226\128\168', '\\u2028'):gsub('\226\128\169', '\\u2029')
  return '"' .. s .. '"'
end

local function int(v)
  return string.format('%.0f', v)
end

-- fnum writes a number as Go's encoding/json does: the shortest digits
-- that read back the same, without an exponent from 1e-6 to 1e21.
local function fnum(v)
  if v == math.floor(v) and math.abs(v) < 1e21 then return int(v) end
  local s
  for p = 1, 17 do
    s = string.format('%.' .. p .. 'g', v)
    if tonumber(s) == v then break end
  end
  local a = math.abs(v)
  if a < 1e-6 or a >= 1e21 then return s end
  local sg, i, f, e = s:match('^(%-?)(%d+)%.?(%d*)e([-+]%d+)$')
  if not sg then return s end
  local digits, point = i .. f, #i + tonumber(e)
  if point <= 0 then return sg .. '0.' .. string.rep('0', -point) .. digits end
  if point >= #digits then return sg .. digits .. string.rep('0', point - #digits) end
  return sg .. digits:sub(1, point) .. '.' .. digits:sub(point + 1)
end

-- u8 is the length of the well-formed UTF-8 sequence at s[j] (a byte
-- >= 128), or nil: no overlongs, surrogates or values past U+10FFFF.
local function u8(s, j)
  local c, c2 = s:byte(j, j + 1)
  local n, lo, hi = nil, 0x80, 0xBF
  if c >= 0xC2 and c <= 0xDF then n = 2
  elseif c >= 0xE0 and c <= 0xEF then n = 3
  elseif c >= 0xF0 and c <= 0xF4 then n = 4
  else return nil end
  if c == 0xE0 then lo = 0xA0 elseif c == 0xED then hi = 0x9F
  elseif c == 0xF0 then lo = 0x90 elseif c == 0xF4 then hi = 0x8F end
  if not c2 or c2 < lo or c2 > hi then return nil end
  for k = j + 2, j + n - 1 do
    local b = s:byte(k)
    if not b or b < 0x80 or b > 0xBF then return nil end
  end
  return n
end

-- u8ok says whether s is UTF-8 throughout: each well-formed sequence (the
-- ranges of u8) replaced by an ASCII byte, no byte >= 128 may be left.
-- Patterns, not a loop: a value of many characters costs little.
local function u8ok(s)
  if not s:find('[\128-\255]') then return true end
  s = s:gsub('[\194-\223][\128-\191]', 'u')
  s = s:gsub('\224[\160-\191][\128-\191]', 'u')
  s = s:gsub('[\225-\236\238\239][\128-\191][\128-\191]', 'u')
  s = s:gsub('\237[\128-\159][\128-\191]', 'u')
  s = s:gsub('\240[\144-\191][\128-\191][\128-\191]', 'u')
  s = s:gsub('[\241-\243][\128-\191][\128-\191][\128-\191]', 'u')
  s = s:gsub('\244[\128-\143][\128-\191][\128-\191]', 'u')
  return not s:find('[\128-\255]')
end

-- jwalk says why raw is no value the C side reads (nil: it is one), by
-- the same rules: at most MAXKEY bytes, nested at most MAXDEPTH deep, at
-- most MAXVALUES values (member names counted), strict JSON (UTF-8, no
-- \u0000 or lone surrogates, no hex, inf, nan, leading zeros or '+',
-- integers within 64 bits, reals finite), which cjson alone reads more
-- loosely. A walk, byte by byte in places: jcheck goes around it for
-- the values every writer makes.
local function jwalk(s)
  if #s > MAXKEY then return 'larger than ' .. MAXKEY .. ' bytes' end
  local i, depth, values = 1, 0, 0
  local function ws() i = s:find('[^ \t\r\n]', i) or #s + 1 end
  local function str()
    local from = i + 1
    i = from
    values = values + 1
    while true do
      local j = s:find('[\"\\%z\1-\31]', i)
      if not j then return false end
      local c = s:byte(j)
      if c == 34 then
        i = j + 1
        return u8ok(s:sub(from, j - 1))
      end
      if c < 32 then return false end
      if c == 92 then
        local e = s:sub(j + 1, j + 1)
        if e == 'u' then
          local h = s:match('^%x%x%x%x', j + 2)
          local cp = h and tonumber(h, 16)
          if not cp or cp == 0 or (cp >= 0xDC00 and cp <= 0xDFFF) then return false end
          i = j + 6
          if cp >= 0xD800 and cp <= 0xDBFF then
            local l = s:match('^\\u(%x%x%x%x)', i)
            local lc = l and tonumber(l, 16)
            if not lc or lc < 0xDC00 or lc > 0xDFFF then return false end
            i = i + 6
          end
        elseif e ~= '' and ('\"\\/bfnrt'):find(e, 1, true) then
          i = j + 2
        else
          return false
        end
      end
    end
  end
  local function num()
    values = values + 1
    local sg, d = s:match('^(%-?)(%d+)', i)
    if not d or (#d > 1 and d:sub(1, 1) == '0') then return false end
    local j = i + #sg + #d
    local f = s:match('^%.%d+', j)
    if not f and s:sub(j, j) == '.' then return false end
    j = j + (f and #f or 0)
    local x = s:match('^[eE][+-]?%d+', j)
    if not x and s:sub(j, j):match('[eE]') then return false end
    j = j + (x and #x or 0)
    if not f and not x then
      local lim = sg == '-' and '9223372036854775808' or '9223372036854775807'
      if #d > 19 or (#d == 19 and d > lim) then return false end
    else
      local v = tonumber(s:sub(i, j - 1))
      if not v or v == math.huge or v == -math.huge then return false end
    end
    i = j
    return true
  end
  local val
  val = function()
    ws()
    if values >= MAXVALUES then return false, 'more than ' .. MAXVALUES .. ' values' end
    local c = s:sub(i, i)
    if c == '{' or c == '[' then
      values = values + 1
      depth = depth + 1
      if depth > MAXDEPTH then return false, 'nested deeper than ' .. MAXDEPTH end
      local close = c == '{' and '}' or ']'
      i = i + 1
      ws()
      if s:sub(i, i) == close then i = i + 1; depth = depth - 1; return true end
      while true do
        if c == '{' then
          ws()
          if s:sub(i, i) ~= '\"' or not str() then return false end
          ws()
          if s:sub(i, i) ~= ':' then return false end
          i = i + 1
        end
        local ok, why = val()
        if not ok then return false, why end
        ws()
        local d = s:sub(i, i)
        i = i + 1
        if d == close then depth = depth - 1; return true end
        if d ~= ',' then return false end
      end
    elseif c == '\"' then
      return str()
    elseif c == '-' or c:match('^%d$') then
      return num()
    end
    for _, w in ipairs({'true', 'false', 'null'}) do
      if s:sub(i, i + #w - 1) == w then i = i + #w; values = values + 1; return true end
    end
    return false
  end
  local ok, why = val()
  if ok then ws() end
  if not ok or i <= #s then return why or 'not JSON' end
  return nil
end

-- jflat says whether s is certainly a value jwalk reads (false: not
-- certain): at most MAXKEY bytes of printable ASCII without a backslash,
-- spaces only inside strings, one object whose members are named by
-- strings and are strings, null, true, false, integers of at most 18
-- digits (no leading zero) or arrays of them, at most MAXVALUES values
-- in all. That is every GPU key and queue entry canhazgpu and these
-- scripts write (notes of plain text), found by a few patterns over the
-- whole text instead of a walk: each string becomes \1, each integer
-- \2, each null, true or false \3, each array \4 (bytes s cannot hold),
-- and what is left must be {\1:v,...} with v one of them, or {}.
local FLATWORD = {null = '\3', ['true'] = '\3', ['false'] = '\3'}
local DIGITS19 = string.rep('%d', 19)
local function jflat(s)
  if #s > MAXKEY or s:find('[%z\1-\31\127-\255]') or s:find('\\', 1, true) then
    return false
  end
  local sk, values = s:gsub('"[^"]*"', '\1')
  if sk:find('[^{}%[%],:%-%w\1]') or sk:find('[^%d]0%d') or sk:find(DIGITS19) then
    return false
  end
  local k
  sk, k = sk:gsub('%-?%d+', '\2')
  values = values + k
  sk, k = sk:gsub('%a+', FLATWORD)
  values = values + k
  local ok = true
  if sk:find('[', 1, true) then
    sk = sk:gsub('%[([\2,]*)%]', function(inner)
      values = values + 1
      if inner ~= '' and (inner .. ','):gsub('\2,', '') ~= '' then ok = false end
      return '\4'
    end)
  end
  local body = ok and sk:match('^{(.*)}$')
  if not body then return false end
  if body ~= '' and (body .. ','):gsub('\1:[\1-\4],', '') ~= '' then return false end
  return values + 1 <= MAXVALUES
end

-- jcheck is jwalk's verdict on s, found at once for a flat value.
local function jcheck(s)
  if jflat(s) then return nil end
  return jwalk(s)
end

-- tcheck says what is wrong with v as parameter k, a text of at most max
-- bytes (nil: nothing): as lg_text_check, no control character (C0,
-- DEL, C1) and nothing but UTF-8. need: it must be there, not empty.
local function tcheck(k, v, max, need)
  if isnil(v) then return need and k .. ': missing' or nil end
  if type(v) ~= 'string' then return k .. ': not a string' end
  if need and v == '' then return k .. ': empty' end
  if #v > max then return k .. ': longer than ' .. max .. ' bytes' end
  local i = 1
  while true do
    local j = v:find('[%z\1-\31\127-\255]', i)
    if not j then return nil end
    local c = v:byte(j)
    local n = c >= 128 and u8(v, j)
    if c < 128 or (c == 0xC2 and v:byte(j + 1) < 0xA0) then
      return k .. ': a control character at byte ' .. j
    end
    if not n then return k .. ': not UTF-8 at byte ' .. j end
    i = j + n
  end
end

local function isint(v, lo, hi)
  return type(v) == 'number' and v == math.floor(v) and v >= lo and v <= hi
end

-- idcheck says what is wrong with parameter k, a list of GPU ids: a
-- non-empty array (empty only with may_empty) of distinct integers.
local function idcheck(k, v, may_empty)
  if isnil(v) then return nil end
  if type(v) ~= 'table' then return k .. ': not a list' end
  if #v == 0 and not may_empty then return k .. ': an empty list' end
  if #v > MAXGPUS then return k .. ': more than ' .. MAXGPUS .. ' ids' end
  local seen = {}
  for _, id in ipairs(v) do
    if not isint(id, 0, MAXGPUID) then return k .. ': not a GPU id' end
    if seen[id] then return k .. ': a GPU id given twice' end
    seen[id] = true
  end
  return nil
end

local TYPES = {run = true, manual = true, k8s = true}

-- echeck says what is wrong with e, a queue entry (nil: nothing): as sent
-- (texts within their bounds) or, stored, as read from its key (texts of
-- any kind, as canhazgpu writes them). Its counts and ids are bounded
-- either way: they drive the scripts' loops.
local function echeck(e, stored)
  if type(e) ~= 'table' then return 'entry: not an object' end
  local function txt(k, v, max, need)
    if not stored then return tcheck('entry: ' .. k, v, max, need) end
    if isnil(v) then return need and 'entry: ' .. k .. ': missing' or nil end
    if type(v) ~= 'string' then return 'entry: ' .. k .. ': not a string' end
  end
  local w = txt('user', e.user, MAXNAME, true) or
    txt('actual_user', e.actual_user, MAXNAME, false) or
    txt('note', e.note, MAXNOTE, false) or
    txt('id', e.id, MAXID, stored) or
    idcheck('entry: requested_ids', e.requested_ids, true) or
    idcheck('entry: allocated_gpus', e.allocated_gpus, true)
  if w then return w end
  if not isint(e.requested_count, 1, MAXGPUS) then
    return 'entry: requested_count: not from 1 to ' .. MAXGPUS
  end
  if not TYPES[e.reservation_type] then
    return 'entry: reservation_type: not run, manual or k8s'
  end
  if not isnil(e.expiry_duration) and not isint(e.expiry_duration, 0, MAXDUR * 1e9) then
    return 'entry: expiry_duration: not from 0 to ' .. MAXDUR .. ' s'
  end
  if not stored and not isnil(e.wait_s) and (type(e.wait_s) ~= 'number' or
      not (e.wait_s >= 0 and e.wait_s <= MAXDUR)) then
    return 'entry: wait_s: not from 0 to ' .. MAXDUR .. ' s'
  end
  return nil
end

-- pcheck says what is wrong with the parameters (nil: nothing), by the
-- bounds the C side applies before it sends them. Run before any loop
-- and before the lock.
local function pcheck()
  if not isint(NOW, 0, TIMEMAX) or not isint(NS, 0, 999999999) or
      not isint(OFF, -86400, 86400) then
    return 'now: not a time of the ledger'
  end
  local w = tcheck('user', P.user, MAXNAME, false) or
    tcheck('actual_user', P.actual_user, MAXNAME, false) or
    tcheck('note', P.note, MAXNOTE, false) or
    tcheck('claim_uid', P.claim_uid, MAXID, false) or
    tcheck('namespace', P.namespace, MAXNAME, false) or
    tcheck('pod', P.pod, MAXNAME, false) or
    tcheck('qid', P.qid, MAXID, false) or
    idcheck('ids', P.ids, false) or idcheck('gpus', P.gpus, true) or
    idcheck('unreserved', P.unreserved, true)
  if w then return w end
  if P.user == '' then return 'user: empty' end
  if P.claim_uid == '' then return 'claim_uid: empty' end
  if not isnil(P.type) and not TYPES[P.type] then return 'type: not run, manual or k8s' end
  if not isnil(P.types) then
    if type(P.types) ~= 'table' or #P.types == 0 then return 'types: not a list' end
    for _, t in ipairs(P.types) do
      if not TYPES[t] then return 'types: not run, manual or k8s' end
    end
  end
  if not isnil(P.count) and not isint(P.count, 1, MAXGPUS) then
    return 'count: not from 1 to ' .. MAXGPUS
  end
  if not isnil(P.duration) and (type(P.duration) ~= 'number' or
      not (P.duration > 0 and P.duration <= MAXDUR)) then
    return 'duration: not from 1 s to ' .. MAXDUR .. ' s'
  end
  if not isnil(P.since) then
    if type(P.since) ~= 'table' or type(P.ids) ~= 'table' or #P.since ~= #P.ids then
      return 'since: not a time per id'
    end
    for _, t in ipairs(P.since) do
      if not isint(t, 0, TIMEMAX) then return 'since: not a time of the ledger' end
    end
  end
  if not isnil(P.holds) then
    if type(P.holds) ~= 'table' or #P.holds > MAXHOLDS then
      return 'holds: not a list of at most ' .. MAXHOLDS
    end
    for _, h in ipairs(P.holds) do
      if type(h) ~= 'table' or not isint(h.gpu, 0, MAXGPUID) then return 'holds: not a GPU id' end
      w = tcheck('holds: claim_uid', h.claim_uid, MAXID, true) or
        tcheck('holds: user', h.user, MAXNAME, true) or
        tcheck('holds: namespace', h.namespace, MAXNAME, false) or
        tcheck('holds: pod', h.pod, MAXNAME, false) or
        tcheck('holds: mig', h.mig, MAXID, false)
      if w then return w end
    end
  end
  if not isnil(P.keep) then
    if type(P.keep) ~= 'table' or #P.keep > MAXHOLDS then return 'keep: not a list' end
    for _, u in ipairs(P.keep) do
      w = tcheck('keep', u, MAXID, true)
      if w then return w end
    end
  end
  if not isnil(P.mig) then
    if type(P.mig) ~= 'table' or #P.mig > MAXHOLDS then return 'mig: not a list' end
    for _, m in ipairs(P.mig) do
      if type(m) ~= 'table' or not isint(m.gpu, 0, MAXGPUID) then return 'mig: not a GPU id' end
      w = tcheck('mig: uuid', m.uuid, MAXID, true)
      if w then return w end
    end
  end
  if not isnil(P.score) and type(P.score) ~= 'number' and type(P.score) ~= 'string' then
    return 'score: not a number'
  end
  if not isnil(P.entry) then return echeck(P.entry, false) end
  return nil
end

local function gkey(id)
  return PFX .. 'gpu:' .. int(id)
end

-- gets reads the values of GPUs 0 to n - 1 in one MGET (false: no key),
-- indexed from 0, in slices of 256 keys
local function gets(n)
  local raws = {}
  for lo = 0, n - 1, 256 do
    local keys = {}
    for i = lo, math.min(lo + 255, n - 1) do keys[#keys + 1] = gkey(i) end
    local v = redis.call('MGET', unpack(keys))
    for k = 1, #keys do raws[lo + k - 1] = v[k] end
  end
  return raws
end

-- gpu_count is the pool's size, or nil and why: not set, or not a
-- number from 0 to MAXGPUS (every loop over the GPUs is bounded by it).
local function gpu_count()
  local c = redis.call('GET', PFX .. 'gpu_count')
  if not c then return nil, 'nocount' end
  if not c:match('^%d+$') or #c > 6 or tonumber(c) > MAXGPUS then return nil, 'badcount' end
  return tonumber(c)
end

-- sload reads the state of GPU id (raw: its value, read when nil):
-- free = true for no holder (last_released kept as lr, the raw value);
-- bad = why the value is unusable (held, never written over); else a
-- holder, with active = false once a run reservation has had no
-- heartbeat for 300 s or a manual one is past its expiry.
local STRS = {'user', 'actual_user', 'type', 'note', 'partial_queue_id', 'claim_uid'}
local TIMES = {'start_time', 'last_heartbeat', 'expiry_time', 'last_released'}
local RELEASED = '^{"start_time":null,"last_heartbeat":null,"expiry_time":null,' ..
  '"last_released":"([%w:.+%-]*)"}$'
local function sload(id, raw)
  if raw == nil then raw = redis.call('GET', gkey(id)) end
  local st = {id = id}
  if not raw then st.free = true; return st end
  -- the value every release writes, canhazgpu's and ours (so that of
  -- nearly every free GPU), read by one pattern: what follows would
  -- find it valid JSON, free, with this last_released
  local lr = #raw <= MAXKEY and raw:match(RELEASED)
  if lr then
    if not tvalid(lr) then st.bad = 'last_released is not a time'; return st end
    st.lr, st.free = lr, true
    return st
  end
  st.bad = jcheck(raw)
  if st.bad then return st end
  if not raw:match('^[ \t\r\n]*{') then st.bad = 'not a JSON object'; return st end
  local ok, j = pcall(cjson.decode, raw)
  if not ok then st.bad = 'not JSON'; return st end
  for _, k in ipairs(STRS) do
    local v = j[k]
    if not isnil(v) then
      if type(v) ~= 'string' then st.bad = k .. ' is not a string'; return st end
      if v ~= '' then st[k] = v end
    end
  end
  for _, k in ipairs(TIMES) do
    local t = tparse(j[k])
    if t == false then st.bad = k .. ' is not a time'; return st end
    st[k] = t
  end
  st.lr = j.last_released
  if not st.user then st.free = true; return st end
  local t = st.type
  if t == 'run' then
    st.active = st.last_heartbeat ~= nil and NOW - st.last_heartbeat[1] <= 300 and
      st.last_heartbeat[1] - NOW <= MAXAHEAD
  elseif t == 'manual' then
    st.active = st.expiry_time == nil or st.expiry_time[1] >= NOW
  elseif t == 'k8s' then
    st.active = true
  else
    st.bad = 'type is not run, manual or k8s'
  end
  return st
end

local function held(st)
  return not st.free and not st.bad
end

-- info is what the client needs of a reservation for its records.
local function info(st)
  local function sec(t) return t and t[1] or NULL end
  return {gpu = st.id, user = st.user or NULL, actual_user = st.actual_user or NULL,
    type = st.type or NULL, claim_uid = st.claim_uid or NULL,
    since = sec(st.start_time), expires = sec(st.expiry_time),
    heartbeat = sec(st.last_heartbeat), note = st.note or NULL,
    queue_id = st.partial_queue_id or NULL}
end

local function tval(t)
  if not t then return 'null' end
  return js(tfmt(t[1], t[2], t[3]))
end

-- gostate writes st as canhazgpu's Go SetGPUState does: every member in
-- its order, empty strings left out, absent times null.
local function gostate(st)
  local o = {}
  local function s(k)
    if st[k] and st[k] ~= '' then o[#o + 1] = '"' .. k .. '":' .. js(st[k]) end
  end
  local function t(k) o[#o + 1] = '"' .. k .. '":' .. tval(st[k]) end
  s('user'); s('actual_user'); t('start_time'); t('last_heartbeat'); s('type')
  t('expiry_time'); t('last_released'); s('note'); s('partial_queue_id')
  s('claim_uid')
  return '{' .. table.concat(o, ',') .. '}'
end

-- fresh writes a new reservation as canhazgpu's Lua allocator does:
-- integer times, note only when not empty.
local function fresh(user, actual, typ, expiry, note, claim)
  local s = '{"user":' .. js(user) .. ',"actual_user":' .. js(actual or user) ..
    ',"start_time":' .. int(NOW) .. ',"type":' .. js(typ)
  if typ == 'run' then
    s = s .. ',"last_heartbeat":' .. int(NOW)
  elseif typ == 'manual' and not isnil(expiry) then
    s = s .. ',"expiry_time":' .. int(expiry)
  end
  if not isnil(note) and note ~= '' then s = s .. ',"note":' .. js(note) end
  if not isnil(claim) then s = s .. ',"claim_uid":' .. js(claim) end
  return s .. '}'
end

-- history adds the usage record of st's reservation, ending now.
local function history(st)
  local t = st.start_time
  if not t then return end
  local ds, dn = NOW - t[1], NS - t[2]
  if dn < 0 and ds > 0 then
    ds, dn = ds - 1, dn + 1e9
  elseif dn > 0 and ds < 0 then
    ds, dn = ds + 1, dn - 1e9
  end
  local rec = '{"user":' .. js(st.user) .. ',"gpu_id":' .. int(st.id) ..
    ',"start_time":' .. tval(t) .. ',"end_time":' .. js(NOWSTR) ..
    ',"duration_seconds":' .. fnum(ds + dn / 1e9) ..
    ',"reservation_type":' .. js(st.type) .. '}'
  redis.call('ZADD', HIST, NOW, rec)
  redis.call('EXPIRE', HIST, 90 * 86400)
end

local released = {}

-- release frees st's GPU as canhazgpu does, with its usage record, and
-- its claim keys for a k8s hold. Returns the free state.
local function release(st)
  history(st)
  redis.call('SET', gkey(st.id), '{"start_time":null,"last_heartbeat":null,' ..
    '"expiry_time":null,"last_released":' .. js(NOWSTR) .. '}')
  if st.type == 'k8s' and st.claim_uid then
    local c = PFX .. 'k8s:claim:' .. st.claim_uid
    redis.call('SREM', c .. ':gpus', int(st.id))
    redis.call('DEL', c .. ':gpu:' .. int(st.id))
  end
  released[#released + 1] = info(st)
  return {id = st.id, free = true, lr = NOWSTR}
end

local function qkey(qid)
  return QUEUE .. ':entry:' .. qid
end

-- ejudge says why the queue entry raw (a value, or nil for none) cannot
-- stay queued (nil: it can): unreadable, no heartbeat for 120 s, or one
-- more than MAXAHEAD s ahead of the clock (it cannot be judged); stale
-- says the reason is only the age.
local function ejudge(raw)
  if not raw then return 'no entry' end
  local why = jcheck(raw)
  if why then return why end
  local e = cjson.decode(raw)
  why = echeck(e, true)
  if why then return why end
  local hb = tparse(e.last_heartbeat)
  if not hb then return 'last_heartbeat: not a time' end
  if NOW - hb[1] > 120 then return 'stale', true end
  if hb[1] - NOW > MAXAHEAD then
    return 'last_heartbeat ' .. int(hb[1] - NOW) .. ' s ahead of the clock'
  end
  return nil
end

local dropped = {}

-- queue_cleanup removes the first MAXQUEUE queue entries that cannot stay
-- queued (ejudge) and frees the GPUs they hold, in one pass over the GPUs
-- (their usage records too); dropped lists those removed for another
-- reason than their age, with it.
local function queue_cleanup(n)
  local gone, any = {}, false
  for _, qid in ipairs(redis.call('ZRANGE', QUEUE, 0, MAXQUEUE - 1)) do
    local why, stale = ejudge(redis.call('GET', qkey(qid)))
    if why then
      gone[qid], any = true, true
      if not stale then dropped[#dropped + 1] = {id = qid, why = why} end
      redis.call('ZREM', QUEUE, qid)
      redis.call('DEL', qkey(qid))
    end
  end
  if not any then return end
  local raws = gets(n)
  for i = 0, n - 1 do
    local st = sload(i, raws[i])
    if held(st) and st.partial_queue_id and gone[st.partial_queue_id] then release(st) end
  end
end

-- release_partials frees the GPUs a queue entry holds.
local function release_partials(qid, n)
  local raws = gets(n)
  for i = 0, n - 1 do
    local st = sload(i, raws[i])
    if held(st) and st.partial_queue_id == qid then release(st) end
  end
end

-- cleanup frees stale and expired reservations; returns every GPU's
-- state, indexed from 0.
local function cleanup(n)
  local sts, raws = {}, gets(n)
  for i = 0, n - 1 do
    local st = sload(i, raws[i])
    if held(st) and not st.active then st = release(st) end
    sts[i] = st
  end
  return sts
end

-- rough is canhazgpu's own reading of last_released for its LRU order.
local function rough(v)
  if isnil(v) then return 0 end
  if type(v) == 'string' then
    local y, mo, d, h, mi, s = v:match('(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)')
    if y then
      return ((y - 1970) * 365 + (mo - 1) * 30 + d) * 86400 + h * 3600 + mi * 60 + s
    end
  end
  return NOW - 86400
end

-- order sorts free GPUs (cands, in id order) as canhazgpu's allocator
-- does: those user released most recently (in the last 100 usage
-- records) first, then the others by last_released, oldest first. The
-- sort is Lua's own, not stable, with a comparator false on ties, so
-- that ties come out as they do there (a fresh pool of 8: 0,4,5,6,3,1,2,7).
-- A GPU's MRU time is the score of its newest record of user's: the
-- first one in score order, whose score alone is read (ZSCORE, for the
-- candidates only), not the 100 scores as text; the records are read
-- until every candidate has its first.
local function order(cands, user)
  local first, want, left = {}, {}, #cands
  for _, c in ipairs(cands) do want[c.id] = true end
  local h = redis.call('ZREVRANGE', HIST, 0, 99)
  -- a record without "user":"<user>" (with or without a space) is not
  -- the user's, when the name needs no escaping: no need to decode it;
  -- a record without the name at all has neither
  local plain = user:match('^[%w%-_.@:]+$') ~= nil
  local a, b = '"user":"' .. user .. '"', '"user": "' .. user .. '"'
  for i = 1, #h do
    local id
    local named = h[i]:find(user, 1, true)
    if plain and named and (h[i]:find(a, 1, true) or h[i]:find(b, 1, true)) then
      id = tonumber(h[i]:match('"gpu_id":%s*(%d+)[,}]'))
    end
    if not plain or (id == nil and named) then
      local ok, r = pcall(cjson.decode, h[i])
      if ok and type(r) == 'table' and r.user == user and type(r.gpu_id) == 'number' then
        id = r.gpu_id
      end
    end
    if id and want[id] and not first[id] then
      first[id], left = h[i], left - 1
      -- every candidate has its newest record: the older ones change nothing
      if left == 0 then break end
    end
  end
  for _, c in ipairs(cands) do
    c.mru = first[c.id] and tonumber(redis.call('ZSCORE', HIST, first[c.id])) or 0
    c.rough = rough(c.lr)
  end
  table.sort(cands, function(a, b)
    if a.mru > 0 and b.mru > 0 then return a.mru > b.mru end
    if a.mru > 0 then return true end
    if b.mru > 0 then return false end
    return a.rough < b.rough
  end)
end

local function set_of(a)
  local s = {}
  if type(a) == 'table' then
    for _, v in ipairs(a) do s[v] = true end
  end
  return s
end

-- locked runs body holding canhazgpu:allocation_lock with our token, and
-- deletes the lock after only while it is still ours.
local function locked(body)
  if not redis.call('SET', LOCK, P.token, 'NX', 'EX', 10) then
    return cjson.encode({locked = true})
  end
  local ok, res = pcall(body)
  if redis.call('GET', LOCK) == P.token then redis.call('DEL', LOCK) end
  if not ok then
    if type(res) == 'table' and res.err then res = res.err end
    return redis.error_reply(tostring(res))
  end
  return res
end

local function result(r)
  r.released = released
  if #dropped > 0 then r.dropped = dropped end
  return cjson.encode(r)
end

-- with_pool runs body(n) under the lock once the pool's size n is known
-- to be in range; a size out of range is answered before the lock.
local function with_pool(body)
  local n, why = gpu_count()
  if not n then return result({error = why}) end
  return locked(function() return body(n) end)
end

-- enc_entry writes a queue entry as canhazgpu's Go QueueEntry.
local function ints(a)
  local t = {}
  for i, v in ipairs(a) do t[i] = int(v) end
  return '[' .. table.concat(t, ',') .. ']'
end
local function enc_entry(e)
  local s = '{"id":' .. js(e.id) .. ',"user":' .. js(e.user) ..
    ',"actual_user":' .. js(isnil(e.actual_user) and '' or e.actual_user) ..
    ',"requested_count":' .. int(e.requested_count)
  if type(e.requested_ids) == 'table' and #e.requested_ids > 0 then
    s = s .. ',"requested_ids":' .. ints(e.requested_ids)
  end
  s = s .. ',"allocated_gpus":' .. ints(type(e.allocated_gpus) == 'table' and e.allocated_gpus or {}) ..
    ',"reservation_type":' .. js(e.reservation_type)
  if type(e.expiry_duration) == 'number' and e.expiry_duration ~= 0 then
    s = s .. ',"expiry_duration":' .. int(e.expiry_duration)
  end
  if type(e.note) == 'string' and e.note ~= '' then s = s .. ',"note":' .. js(e.note) end
  s = s .. ',"enqueue_time":' .. js(e.enqueue_time) .. ',"last_heartbeat":' .. js(e.last_heartbeat)
  -- a time, as canhazgpu writes it; a number (as written before) is kept
  if type(e.wait_timeout) == 'string' then
    s = s .. ',"wait_timeout":' .. js(e.wait_timeout)
  elseif type(e.wait_timeout) == 'number' and e.wait_timeout ~= 0 then
    s = s .. ',"wait_timeout":' .. fnum(e.wait_timeout)
  end
  return s .. '}'
end

-- Parameters out of bounds are refused before anything is read or locked.
do
  local why = pcheck()
  if why then return cjson.encode({error = 'param', why = why}) end
end
