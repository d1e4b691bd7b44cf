import { test } from "node:test";
import assert from "node:assert/strict";
import { CLOCK_LATEST_START, CLOCK_MAX_MS, CLOCK_RUN_ALLOWANCE_MS, EPISODE_DEFAULT_CLOCK, WpCodeboxError, episodeDeterminismOptions, parseClockOption, parseSeedOption, resolveDeterminism } from "@wp-codebox/runtime-core";

test("--clock: real, or an ISO-8601 instant with a timezone (normalised to UTC)", () => {
  assert.deepEqual(parseClockOption("real"), { clock: "real" });
  assert.deepEqual(parseClockOption("2025-01-01T02:00:00+02:00"), { clock: "virtual", start: "2025-01-01T00:00:00.000Z" });
  for (const bad of ["yesterday", "2025-01-01", "2025-01-01T00:00:00", "2025-13-01T00:00:00Z", ""]) {
    assert.throws(() => parseClockOption(bad), { code: "invalid-clock" }, bad);
  }
});

// Each instant must exist as written (no roll-over into the next month) and leave the clock a
// year of room before the end of 9999.
const clockCases: [string, string | RegExp][] = [
  ["2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z"],
  ["2025-02-28T23:59:59Z", "2025-02-28T23:59:59.000Z"],
  ["1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000Z"],
  ["2025-12-31T23:30:00-01:00", "2026-01-01T00:30:00.000Z"],
  [CLOCK_LATEST_START, new Date(CLOCK_MAX_MS - CLOCK_RUN_ALLOWANCE_MS).toISOString()],
  ["2025-02-30T00:00:00Z", /does not exist on the calendar/],
  ["2025-02-29T00:00:00Z", /does not exist on the calendar/],
  ["2100-02-29T00:00:00Z", /does not exist on the calendar/],
  ["2025-04-31T00:00:00Z", /does not exist on the calendar/],
  ["2025-00-10T00:00:00Z", /does not exist on the calendar/],
  ["2025-01-00T00:00:00Z", /does not exist on the calendar/],
  ["2025-01-01T24:00:00Z", /does not exist on the calendar/],
  ["2025-01-01T23:60:00Z", /does not exist on the calendar/],
  ["2025-01-01T23:59:60Z", /does not exist on the calendar/],
  ["2025-01-01T00:00:00+24:00", /does not exist on the calendar/],
  ["1969-12-31T23:59:59Z", /before 1970/],
  ["9999-12-31T23:59:59Z", /later than/],
  ["9999-01-01T00:00:00Z", /later than/],
];
for (const [input, expected] of clockCases) {
  test(`--clock ${input} → ${typeof expected === "string" ? expected : `invalid-clock ${expected}`}`, () => {
    if (typeof expected === "string") {
      assert.deepEqual(parseClockOption(input), { clock: "virtual", start: expected });
      return;
    }
    assert.throws(() => parseClockOption(input), (error: WpCodeboxError) => {
      assert.equal(error.code, "invalid-clock");
      assert.match(error.message, expected);
      assert.match(error.message, new RegExp(`from 1970-01-01T00:00:00Z to ${CLOCK_LATEST_START}`));
      return true;
    });
  });
}

test("--seed: a whole number from 0 to 2^53-1", () => {
  assert.equal(parseSeedOption("42"), 42);
  assert.equal(parseSeedOption(0), 0);
  for (const bad of ["-1", "1.5", "abc", "9007199254740992", -3]) assert.throws(() => parseSeedOption(bad), { code: "invalid-seed" }, String(bad));
});

test("a seed is refused with a policy that allows outbound network; the origin defaults to stable when deterministic", () => {
  assert.throws(() => resolveDeterminism({ seed: 1 }, "allow"), { code: "seed-with-network" });
  assert.throws(() => resolveDeterminism({ seed: 1 }, { allowHosts: ["example.org"] }), { code: "seed-with-network" });
  assert.deepEqual(resolveDeterminism({ seed: 1 }, { allowHosts: [] }), { clock: "real", seed: 1, origin: "stable" });
  assert.deepEqual(resolveDeterminism({ clock: "2025-01-01T00:00:00Z" }, "allow"), { clock: "virtual", start: "2025-01-01T00:00:00.000Z", origin: "stable" });
  assert.deepEqual(resolveDeterminism({}, "deny"), { clock: "real", origin: "loopback" });
  assert.deepEqual(resolveDeterminism({ clock: "2025-01-01T00:00:00Z", origin: "loopback" }, "deny").origin, "loopback");
});

test("episodes default to a virtual clock and seed 0, without a seed when the network is open", () => {
  assert.deepEqual(episodeDeterminismOptions({}, "deny"), { clock: EPISODE_DEFAULT_CLOCK, seed: 0 });
  assert.deepEqual(episodeDeterminismOptions({}, "allow"), { clock: EPISODE_DEFAULT_CLOCK });
  assert.deepEqual(episodeDeterminismOptions({ clock: "real", seed: 3 }, "deny"), { clock: "real", seed: 3 });
});
