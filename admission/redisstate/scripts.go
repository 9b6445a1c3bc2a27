package redisstate

import "github.com/redis/go-redis/v9"

// Times are integer microseconds since the Unix epoch (a zero time is 0),
// exact in Lua's doubles; they are written with string.format('%d'),
// since Redis' Lua turns a number into a string with 14 digits only.

// cooldownScript extends the cooldown (KEYS[1], a hash) to ARGV[1] from
// source ARGV[2] when later (0 reads it), now ARGV[3]; it returns the end
// and its source.
var cooldownScript = redis.NewScript(`
local k = KEYS[1]
local f = redis.call('HMGET', k, 'until', 'source')
local cur = tonumber(f[1]) or 0
local u, now = tonumber(ARGV[1]), tonumber(ARGV[3])
if u > cur then
  redis.call('HSET', k, 'until', string.format('%d', u), 'source', ARGV[2])
  redis.call('PEXPIRE', k, math.max(math.floor((u - now) / 1000), 0) + 1000)
  return {u, ARGV[2]}
end
return {cur, f[2] or ''}
`)

// slotScript takes the slot of a retry that could go at ARGV[1], slots
// ARGV[2] apart, now ARGV[3] (KEYS[1] holds the next free slot).
var slotScript = redis.NewScript(`
local k = KEYS[1]
local nxt = tonumber(redis.call('GET', k) or '0') or 0
local at, width, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if nxt > at then at = nxt end
redis.call('SET', k, string.format('%d', at + width), 'PX', math.max(math.floor((at + width - now) / 1000), 0) + 1000)
return at
`)

// paceScript is one step of admission's Pace (admission.PaceStep) on the
// hash KEYS[1]: ARGV is op, now, sent, wait (negative: none), deadline
// (0: none), margin, gen (confirm, refused), at, decrease, increase, min
// rate, the key's TTL in ms. It returns {at, gen, ok}, zeros for a step
// that is no reserve or a confirm that fails. The arithmetic is
// paceState's in admission/pace.go, step for step (steps_test.go).
var paceScript = redis.NewScript(`
local k = KEYS[1]
local op, now = ARGV[1], tonumber(ARGV[2])
local f = redis.call('HMGET', k, 'rate', 'next', 'hold', 'cut', 'grown', 'gen', 'last', 'n')
local rate = tonumber(f[1]) or 0
local nxt = tonumber(f[2]) or 0
local hold = tonumber(f[3]) or 0
local cut = tonumber(f[4]) or 0
local grown = tonumber(f[5]) or 0
local gen = tonumber(f[6]) or 0
local last = tonumber(f[7]) or 0
local n = tonumber(f[8]) or 0
local function int(x) return string.format('%d', x) end
local window = 16
local out = {0, 0, 0}
if op == 'reserve' then
  local deadline, margin = tonumber(ARGV[5]), tonumber(ARGV[6])
  local at = now
  if hold > at then at = hold end
  if rate > 0 and nxt > at then at = nxt end
  if deadline > 0 and not (at + margin < deadline) then
    return {at, gen, 0}
  end
  redis.call('HSET', k, 's' .. (n % window), int(at), 'n', int(n + 1))
  if rate > 0 then
    redis.call('HSET', k, 'next', int(at + math.floor(1e6 / rate)))
  end
  out = {at, gen, 1}
elseif op == 'confirm' then
  if gen ~= tonumber(ARGV[7]) then
    return out
  end
  local at = tonumber(ARGV[8])
  if at > last then redis.call('HSET', k, 'last', int(at)) end
  out = {at, gen, 1}
elseif op == 'admitted' then
  if rate > 0 then
    if grown < cut then grown = cut end
    local dt = now - grown
    if dt > 0 then
      rate = rate * (1 + tonumber(ARGV[10]) * (math.min(dt, 10e6) / 1e6))
      redis.call('HSET', k, 'rate', string.format('%.17g', rate), 'grown', int(now))
    end
  end
elseif op == 'refused' then
  local sent, wait = tonumber(ARGV[3]), tonumber(ARGV[4])
  if wait > 0 and now + wait > hold then
    redis.call('HSET', k, 'hold', int(now + wait))
  end
  if not (rate > 0 and (sent < cut or tonumber(ARGV[7]) < gen)) then
    if rate == 0 then
      local m = math.min(n, window)
      if m < 2 then
        rate = 1
      else
        local first = tonumber(redis.call('HGET', k, 's' .. ((n - m) % window))) or now
        local span = (now - first) / 1e6
        if span <= 0 then rate = m else rate = m / span end
      end
    end
    rate = math.max(rate * tonumber(ARGV[9]), tonumber(ARGV[11]))
    gen = gen + 1
    nxt = last + math.floor(1e6 / rate)
    if nxt < now then nxt = now end
    redis.call('HSET', k, 'rate', string.format('%.17g', rate), 'cut', int(now), 'grown', int(now),
      'gen', int(gen), 'next', int(nxt))
  end
else
  return redis.error_reply('unknown pace step ' .. op)
end
redis.call('PEXPIRE', k, tonumber(ARGV[12]))
return out
`)
