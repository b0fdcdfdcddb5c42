/**
 * Session admission as Lua scripts, each run atomically in Redis (as BullMQ's src/commands/*.lua
 * are): numbering a session's turns, admitting a turn when its time comes, parking one that is
 * early, and releasing the next when a turn ends. Every script gets the same five keys
 * (sessionKeys) and starts with the helpers in PRELUDE.
 *
 * A session's state: `seq`, the last turn number given out; `next`, the turn allowed to run;
 * `runs` (run id -> turn) and `order` (turn -> "runId|workflow"); `ended` (turn -> outcome:
 * "done", or "failed|<runId>|<turn>" / "cancelled|<runId>|<turn>" naming the turn that failed
 * first); `parked` (turn -> "runId|workflow": a job delayed until its turn comes).
 */

/** The five keys of a session, in the order the scripts take them (one hash slot: `{id}`). */
export function sessionKeys(sessionId: string): string[] {
  const base = `forge:session:{${sessionId}}`;
  return [`${base}:state`, `${base}:runs`, `${base}:order`, `${base}:ended`, `${base}:parked`];
}

/** A session's keys expire this long after the last script touched them (kept alive by use). */
export const SESSION_TTL_MS = 7 * 86_400_000;

const PRELUDE = `
local stateKey, runsKey, orderKey, endedKey, parkedKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]

-- The turn of runId, numbered on first sight. A run registered twice (enqueued by two
-- producers, or registered by the worker that got its job before its producer could) keeps
-- its one number, and a number is only ever given to a run whose job exists.
local function register(runId, workflow)
  local turn = redis.call("HGET", runsKey, runId)
  if turn then return tonumber(turn) end
  turn = redis.call("HINCRBY", stateKey, "seq", 1)
  redis.call("HSET", runsKey, runId, turn)
  redis.call("HSET", orderKey, turn, runId .. "|" .. workflow)
  return turn
end

local function nextTurn()
  return tonumber(redis.call("HGET", stateKey, "next") or "1")
end

-- Record how a turn ended (the first record wins: ending twice is harmless) and move next past
-- every ended turn. Returns the new next and the job parked for it ("" if none), unparked: the
-- caller promotes it.
local function finish(turn, outcome)
  local from = nextTurn()
  if turn >= from and redis.call("HEXISTS", endedKey, turn) == 0 then
    redis.call("HSET", endedKey, turn, outcome)
    -- A turn may end before its time (cancelled while waiting): its job is gone, not parked.
    if turn > from then redis.call("HDEL", parkedKey, turn) end
  end
  local nxt = from
  while redis.call("HEXISTS", endedKey, nxt) == 1 do nxt = nxt + 1 end
  if nxt ~= from then
    redis.call("HSET", stateKey, "next", nxt)
    -- Turn nxt - 1's outcome stays: turn nxt's admission reads it. So do failures: a job taken
    -- again long after its turn failed (a worker paused with it) must still name the turn that
    -- failed first. A "done" one is answered by the run store and can go.
    for t = math.max(from - 1, 1), nxt - 2 do
      if redis.call("HGET", endedKey, t) == "done" then redis.call("HDEL", endedKey, t) end
    end
    for t = from, nxt - 1 do redis.call("HDEL", orderKey, t) end
  end
  local parked = redis.call("HGET", parkedKey, nxt)
  if parked then redis.call("HDEL", parkedKey, nxt) end
  return nxt, parked or ""
end

-- Extend, never shorten: a producer's long delay may have asked for more.
local function keepAlive(ttl)
  for i = 1, #KEYS do
    local left = redis.call("PTTL", KEYS[i])
    if left ~= -2 and left < ttl then redis.call("PEXPIRE", KEYS[i], ttl) end
  end
end
`;

/** ARGV: runId, workflow, ttl. Returns the run's turn. */
const register = `${PRELUDE}
local turn = register(ARGV[1], ARGV[2])
keepAlive(tonumber(ARGV[3]))
return turn
`;

/**
 * ARGV: runId, workflow, afterFailure ("fail" | "continue"), ttl.
 * Returns {"run", turn}; {"fail", turn, outcome of the turn before, "runId|workflow" of the job
 * parked for the turn after, to promote} (this turn's end recorded); {"past", turn, its recorded
 * outcome or ""}; or {"wait", turn, next, "runId|workflow" of turn next}, having recorded the
 * job as parked for its turn (the caller delays the job, then asks `admitted` once, since a
 * release may have come in between).
 */
const admit = `${PRELUDE}
local runId, workflow = ARGV[1], ARGV[2]
local function decide()
  local turn = register(runId, workflow)
  local nxt = nextTurn()
  -- Already past this turn: a job taken again after its turn ended (a paused worker's, or a
  -- stalled duplicate). It must not run now, after the turns that followed: the caller answers
  -- from the run store if the run finished there, and fails it otherwise.
  if turn < nxt then return {"past", turn, redis.call("HGET", endedKey, turn) or ""} end
  if turn == nxt then
    redis.call("HDEL", parkedKey, turn)
    if turn > 1 and ARGV[3] == "fail" then
      local before = redis.call("HGET", endedKey, turn - 1)
      -- Failed fast: its end is recorded here, naming the turn that failed first, so whoever
      -- releases it later cannot name another.
      if before and before ~= "done" then
        local _, parked = finish(turn, before)
        return {"fail", turn, before, parked}
      end
    end
    return {"run", turn}
  end
  redis.call("HSET", parkedKey, turn, runId .. "|" .. workflow)
  return {"wait", turn, nxt, redis.call("HGET", orderKey, nxt) or ""}
end
local verdict = decide()
keepAlive(tonumber(ARGV[4]))
return verdict
`;

/** ARGV: turn. 1 when the turn may run now (its parked mark is cleared), else 0. */
const admitted = `${PRELUDE}
local turn = tonumber(ARGV[1])
if nextTurn() < turn then return 0 end
redis.call("HDEL", parkedKey, turn)
return 1
`;

/**
 * ARGV: runId, workflow, kind ("done" | "failed" | "cancelled"), rootRunId, rootTurn (both ""
 * unless the turn failed because an earlier one did), ttl. Records the turn's end (the first
 * record wins: releasing twice is harmless), moves `next` past every ended turn, and returns
 * {turn, next, "runId|workflow" of the job parked for turn next, or ""}: the caller promotes it.
 */
const release = `${PRELUDE}
local runId, workflow, kind = ARGV[1], ARGV[2], ARGV[3]
local turn = register(runId, workflow)
local outcome = kind
if kind ~= "done" then
  local rootRun, rootTurn = ARGV[4], ARGV[5]
  if rootRun == "" then rootRun, rootTurn = runId, tostring(turn) end
  outcome = kind .. "|" .. rootRun .. "|" .. rootTurn
end
local nxt, parked = finish(turn, outcome)
keepAlive(tonumber(ARGV[6]))
return {turn, nxt, parked}
`;

/** Script name -> Lua source; every script takes the five session keys. */
export const SESSION_SCRIPTS = { forgeRegisterTurn: register, forgeAdmitTurn: admit, forgeTurnAdmitted: admitted, forgeReleaseTurn: release } as const;

export type SessionScript = keyof typeof SESSION_SCRIPTS;
