-- workload.lua -- the Lua workload of bench/fidelity.sh: an ordinary script
-- mixing table, string and closure work. Argument: a size factor (default 1).
local scale = tonumber(arg and arg[1]) or 1

-- tables: build, fill, sort with a comparator, read back
local function tables(n)
  local t = {}
  for i = 1, n do t[i] = { id = i, key = (i * 7919) % 10007, name = "k" .. i } end
  table.sort(t, function(a, b) return a.key < b.key end)
  local sum = 0
  for _, v in ipairs(t) do sum = sum + v.key end
  local map = {}
  for _, v in ipairs(t) do map[v.name] = v end
  for i = 1, n do sum = sum + map["k" .. i].id end
  return sum
end

-- strings: formatting, concatenation through a buffer, pattern matching
local function strings(n)
  local parts = {}
  for i = 1, n do
    parts[#parts + 1] = string.format("%d:%s;", i, string.rep("x", i % 7))
  end
  local s = table.concat(parts)
  local count = 0
  for num, xs in s:gmatch("(%d+):(x*);") do
    if #xs > 3 then count = count + tonumber(num) % 3 end
  end
  local up = s:sub(1, 2000):upper():gsub("X", "y")
  return count + #up
end

-- closures: counters, a small object system with metatables, map/filter/reduce
local function closures(n)
  local function counter()
    local c = 0
    return function(d) c = c + (d or 1); return c end
  end
  local Point = {}
  Point.__index = Point
  function Point.new(x, y) return setmetatable({ x = x, y = y }, Point) end
  function Point:add(o) return Point.new(self.x + o.x, self.y + o.y) end
  function Point:len2() return self.x * self.x + self.y * self.y end
  local function map(t, f) local r = {} for i = 1, #t do r[i] = f(t[i]) end return r end
  local function filter(t, f) local r = {} for i = 1, #t do if f(t[i]) then r[#r + 1] = t[i] end end return r end
  local function reduce(t, f, a) for i = 1, #t do a = f(a, t[i]) end return a end
  local c = counter()
  local pts = {}
  for i = 1, n do pts[i] = Point.new(i % 13, i % 17); c() end
  local acc = Point.new(0, 0)
  for i = 1, n do acc = acc:add(pts[i]) end
  local big = filter(map(pts, function(p) return p:len2() end), function(v) return v > 100 end)
  return reduce(big, function(a, b) return a + b end, 0) + c(0) + acc:len2()
end

-- a recursive function and a coroutine generator
local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end
local function gen(n)
  return coroutine.wrap(function() for i = 1, n do coroutine.yield(i * i) end end)
end

local total = 0
for round = 1, 6 * scale do
  total = total + tables(20000) + strings(20000) + closures(40000) + fib(20)
  for v in gen(20000) do total = total + v % 7 end
end
print(string.format("total %d", total))
