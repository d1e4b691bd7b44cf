/**
 * Which WordPress a sandbox boots when none is named: the newest release when the mirror answers;
 * offline or unreachable the newest of the cached releases and the bundled builds, with one line
 * saying which and why. Table-driven over every combination that matters, plus the once-a-day rule.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { LATEST_CHECK_MAX_AGE_MS, chooseDefaultWordPress, compareWordPressVersions, isLatestCheckFresh, type DefaultWordPressInputs } from "@wp-codebox/runtime-core";

const bundled = ["6.5.5", "6.4.5", "6.3.5"];
const unreachable = { unreachable: "ECONNREFUSED", mirror: "http://127.0.0.1:9/" };

const cases: { name: string; inputs: DefaultWordPressInputs; version: string; source: "release" | "bundled"; chosenBy: string; notice?: RegExp }[] = [
  { name: "online: the mirror's newest release", inputs: { offline: false, latest: { release: "7.0.4" }, cachedReleases: ["6.9.4"], bundledReleases: bundled }, version: "7.0.4", source: "release", chosenBy: "latest" },
  { name: "online: the newest release even when older than a cached one (the mirror decides)", inputs: { offline: false, latest: { release: "6.9.4" }, cachedReleases: ["7.0.4"], bundledReleases: bundled }, version: "6.9.4", source: "release", chosenBy: "latest" },
  {
    name: "offline, fresh cache: the newest bundled build",
    inputs: { offline: true, cachedReleases: [], bundledReleases: bundled },
    version: "6.5.5",
    source: "bundled",
    chosenBy: "offline-bundled",
    notice: /^offline: using WordPress 6\.5\.5, the newest bundled build; WP_CODEBOX_OFFLINE=1 forbids checking for the newest release$/,
  },
  {
    name: "offline with releases cached: the newest cached one (numeric order, 6.10 after 6.9)",
    inputs: { offline: true, cachedReleases: ["6.9.4", "7.0.4", "6.10"], bundledReleases: bundled },
    version: "7.0.4",
    source: "release",
    chosenBy: "offline-cached",
    notice: /^offline: using WordPress 7\.0\.4, the newest release in the cache; WP_CODEBOX_OFFLINE=1/,
  },
  { name: "offline: a bundled build newer than every cached release wins", inputs: { offline: true, cachedReleases: ["6.4.1"], bundledReleases: bundled }, version: "6.5.5", source: "bundled", chosenBy: "offline-bundled", notice: /newest bundled build/ },
  { name: "offline: a tie goes to the release (not minified)", inputs: { offline: true, cachedReleases: ["6.5.5"], bundledReleases: bundled }, version: "6.5.5", source: "release", chosenBy: "offline-cached", notice: /newest release in the cache/ },
  {
    name: "mirror unreachable, fresh cache: the newest bundled build, naming the mirror and the cause",
    inputs: { offline: false, latest: unreachable, cachedReleases: [], bundledReleases: bundled },
    version: "6.5.5",
    source: "bundled",
    chosenBy: "offline-bundled",
    notice: /^offline: using WordPress 6\.5\.5, the newest bundled build; the newest release could not be checked \(http:\/\/127\.0\.0\.1:9\/: ECONNREFUSED\)$/,
  },
  { name: "mirror unreachable, 7.0.4 cached: 7.0.4", inputs: { offline: false, latest: unreachable, cachedReleases: ["7.0.4"], bundledReleases: bundled }, version: "7.0.4", source: "release", chosenBy: "offline-cached", notice: /could not be checked/ },
  { name: "offline ignores a mirror answer (nothing may be asked)", inputs: { offline: true, latest: { release: "7.0.4" }, cachedReleases: [], bundledReleases: bundled }, version: "6.5.5", source: "bundled", chosenBy: "offline-bundled", notice: /WP_CODEBOX_OFFLINE=1/ },
  { name: "no bundled build, a cached release: the release", inputs: { offline: true, cachedReleases: ["6.9.4"], bundledReleases: [] }, version: "6.9.4", source: "release", chosenBy: "offline-cached", notice: /newest release in the cache/ },
];

for (const c of cases) {
  test(`default WordPress: ${c.name}`, () => {
    const choice = chooseDefaultWordPress(c.inputs);
    assert.equal(choice.version, c.version);
    assert.equal(choice.source, c.source);
    assert.equal(choice.chosenBy, c.chosenBy);
    if (c.notice) {
      assert.match(choice.notice ?? "", c.notice);
      assert.doesNotMatch(choice.notice!, /\n/, "exactly one line");
    } else {
      assert.equal(choice.notice, undefined, "the newest release needs no explanation");
    }
  });
}

test("default WordPress: nothing to fall back to is an error, not a guess", () => {
  assert.throws(() => chooseDefaultWordPress({ offline: true, cachedReleases: [], bundledReleases: [] }), /no cached release and no bundled build/);
});

test("the newest-release answer is trusted for a day, and not when it is from the future", () => {
  const now = Date.parse("2026-06-01T12:00:00Z");
  const rows: [string | undefined, boolean][] = [
    [undefined, false],
    ["not a date", false],
    ["2026-06-01T11:59:00Z", true],
    [new Date(now - LATEST_CHECK_MAX_AGE_MS + 1000).toISOString(), true],
    [new Date(now - LATEST_CHECK_MAX_AGE_MS).toISOString(), false],
    ["2026-05-20T12:00:00Z", false],
    ["2026-06-01T12:05:00Z", false],
  ];
  for (const [checkedAt, fresh] of rows) assert.equal(isLatestCheckFresh(checkedAt, now), fresh, String(checkedAt));
  assert.equal(isLatestCheckFresh("2026-06-01T11:00:00Z", now, 0), false, "max age 0: always ask");
});

test("WordPress versions compare numerically", () => {
  const rows: [string, string, number][] = [
    ["6.10", "6.9.4", 1],
    ["7.0", "7.0.0", 0],
    ["6.5.5", "6.5.10", -1],
    ["7.0.4", "6.9.4", 1],
  ];
  for (const [a, b, sign] of rows) assert.equal(Math.sign(compareWordPressVersions(a, b)), sign, `${a} vs ${b}`);
});
