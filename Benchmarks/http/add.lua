-- wrk script for Chime's HTTP load benchmark (driven by Benchmarks/http/http_bench.py).
--
-- Environment:
--   CHIME_MODE    add (default): POST /v1/apps/{app}/requests with one request per call
--                 bulk: the same with an array of CHIME_BULK requests per call
--                 healthz: GET /healthz (the server's ceiling for a request that does no work)
--   CHIME_APP     the app's bundle identifier        CHIME_TOKEN  the app's token
--   CHIME_BULK    requests per call in bulk mode (default 100)
--   CHIME_RUN     a prefix making identifiers unique across runs (default: the start time)
--   CHIME_JSON    file the summary is written to as JSON (default: only printed)
--
-- Every request carries a unique identifier "<run>-<thread>-<counter>" (a per-thread counter), so
-- each 201 stands for one more stored request and the store's pending count can be checked against
-- wrk's count. Triggers are time intervals of 1 to 30 days: everything stays pending.

local mode = os.getenv("CHIME_MODE") or "add"
local app = os.getenv("CHIME_APP") or "com.example.bench"
local token = os.getenv("CHIME_TOKEN") or ""
local bulk = tonumber(os.getenv("CHIME_BULK") or "100")
local run = os.getenv("CHIME_RUN") or tostring(os.time())
local json_path = os.getenv("CHIME_JSON")

local threads = {}
local next_thread = 0

function setup(thread)
  thread:set("thread_id", next_thread)
  next_thread = next_thread + 1
  table.insert(threads, thread)
end

local path, headers, counter, prefix
local note = string.rep("n", 80)

function init(args)
  counter = 0
  prefix = run .. "-" .. tostring(thread_id) .. "-"
  math.randomseed(os.time() + 7919 * thread_id)
  headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
  if mode == "healthz" then
    path = "/healthz"
  else
    path = "/v1/apps/" .. app .. "/requests"
  end
end

-- One request object, about 600 bytes of JSON: a title, a body, a sound, a category, a thread and
-- about 200 bytes of userInfo, as in chime-bench.
local function one()
  counter = counter + 1
  local n = counter
  return string.format(
    '{"identifier":"%s%d","content":{"title":"Reminder %d","body":"Time to stretch, drink some water and look away from the screen.",' ..
    '"sound":"default","categoryIdentifier":"reminder","threadIdentifier":"thread-%d","userInfo":{"taskID":"task-%d-%d",' ..
    '"list":"Personal errands and weekly chores","priority":%d,"tags":["health","daily","focus"],"note":"%s"}},' ..
    '"trigger":{"type":"timeInterval","timeInterval":%d,"repeats":false}}',
    prefix, n, n, n % 16, n, math.random(0, 999999), n % 5, note, math.random(86400, 86400 * 30))
end

function request()
  if mode == "healthz" then
    return wrk.format("GET", path, headers)
  elseif mode == "bulk" then
    local items = {}
    for i = 1, bulk do items[i] = one() end
    return wrk.format("POST", path, headers, "[" .. table.concat(items, ",") .. "]")
  else
    return wrk.format("POST", path, headers, one())
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  local out = string.format(
    '{"mode":"%s","bulk":%d,"threads":%d,"durationUs":%d,"requests":%d,"bytes":%d,' ..
    '"errorsConnect":%d,"errorsRead":%d,"errorsWrite":%d,"errorsStatus":%d,"errorsTimeout":%d,' ..
    '"latencyMeanUs":%.1f,"latencyMaxUs":%d,"latencyP50Us":%d,"latencyP90Us":%d,"latencyP99Us":%d,"latencyP999Us":%d}',
    mode, mode == "bulk" and bulk or 1, #threads, summary.duration, summary.requests, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.max, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9))
  io.write("CHIME_RESULT " .. out .. "\n")
  if json_path then
    local f = io.open(json_path, "w")
    f:write(out .. "\n")
    f:close()
  end
end
