import { test } from "node:test";
import assert from "node:assert/strict";
import { EPISODE_DEFAULT_CLOCK, episodeDeterminismOptions, parseClockOption, parseSeedOption, resolveDeterminism } from "@wp-codebox/runtime-core";

test("--clock: real, or an ISO-8601 instant with a timezone (normalised to UTC)", () => {
  assert.deepEqual(parseClockOption("real"), { clock: "real" });
  assert.deepEqual(parseClockOption("2025-01-01T02:00:00+02:00"), { clock: "virtual", start: "2025-01-01T00:00:00.000Z" });
  for (const bad of ["yesterday", "2025-01-01", "2025-01-01T00:00:00", "2025-13-01T00:00:00Z", ""]) {
    assert.throws(() => parseClockOption(bad), { code: "invalid-clock" }, bad);
  }
});

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
