import { test } from "node:test";
import assert from "node:assert/strict";
import { parseDuration } from "../src/durations.js";
import {
  DEFAULT_BROWSER_STEP_TIMEOUT_MS,
  DEFAULT_BROWSER_TOTAL_TIMEOUT_MS,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_OUTPUT_CAP_BYTES,
} from "../src/defaults.js";
import { WpCodeboxError } from "../src/errors.js";

test("parseDuration: units and bare milliseconds", () => {
  assert.equal(parseDuration("3s"), 3000);
  assert.equal(parseDuration("500ms"), 500);
  assert.equal(parseDuration("2m"), 120_000);
  assert.equal(parseDuration("1h"), 3_600_000);
  assert.equal(parseDuration("1500"), 1500);
  assert.equal(parseDuration("1.5s"), 1500);
  assert.equal(parseDuration(" 0 "), 0);
  assert.equal(parseDuration(250), 250);
});

test("parseDuration: bad input is invalid-duration", () => {
  for (const bad of ["", "abc", "3 s", "-1", "5d", "s", "1e3", "3sec"]) {
    assert.throws(
      () => parseDuration(bad),
      (e: unknown) => e instanceof WpCodeboxError && e.code === "invalid-duration" && e.message.includes(`"${bad.trim()}"`),
      `expected ${JSON.stringify(bad)} to be rejected`,
    );
  }
  assert.throws(() => parseDuration(Number.NaN), { code: "invalid-duration" });
  assert.throws(() => parseDuration(-5), { code: "invalid-duration" });
});

test("defaults live in one file with the documented values", () => {
  assert.equal(DEFAULT_COMMAND_TIMEOUT_MS, 60_000);
  assert.equal(DEFAULT_OUTPUT_CAP_BYTES, 10 * 1024 * 1024);
  assert.equal(DEFAULT_BROWSER_STEP_TIMEOUT_MS, 15_000);
  assert.equal(DEFAULT_BROWSER_TOTAL_TIMEOUT_MS, 120_000);
});

test("durations beyond what a Node timer can wait are refused, not turned into 1 ms", async () => {
  const { parseDuration, MAX_DURATION_MS } = await import("../src/durations.js");
  assert.equal(parseDuration(`${MAX_DURATION_MS}`), MAX_DURATION_MS);
  assert.throws(() => parseDuration("600h"), /invalid-duration|at most/);
  assert.throws(() => parseDuration(MAX_DURATION_MS + 1));
});
