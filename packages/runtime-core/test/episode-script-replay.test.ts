import { test } from "node:test";
import assert from "node:assert/strict";
import { EPISODE_REPLAY_VOLATILE_FIELDS, episodeScriptArgs, normalizeForReplay, normalizeWordPressStateRequest, validateEpisodeScript } from "@wp-codebox/runtime-core";

test("episode script validation lists every issue with its pointer", () => {
  const { valid, issues } = validateEpisodeScript({ schema: "wp-codebox/episode-script/v1", bogus: 1, steps: [{ action: { args: [] } }, { snapshot: false }, { observe: {} }, 3, { foo: 1 }] });
  assert.equal(valid, false);
  assert.deepEqual(issues.map((i) => i.path), ["/bogus", "/steps/0/action/command", "/steps/1/snapshot", "/steps/2/observe/type", "/steps/3", "/steps/4"]);
  assert.equal(validateEpisodeScript({ schema: "wp-codebox/episode-script/v1", steps: [{ snapshot: true }] }).valid, true);
});

test("episode script args: objects become key=value and *-json", () => {
  assert.deepEqual(episodeScriptArgs({ code: "<?php echo 1;", steps: [{ kind: "navigate" }], n: 3 }), ["code=<?php echo 1;", 'steps-json=[{"kind":"navigate"}]', "n=3"]);
});

test("replay normalisation removes exactly the declared volatile fields and the sandbox origin", () => {
  // Sandbox values (dates, nonces, cookies) are deterministic under --clock/--seed and stay; only host timing and ids go.
  const value = { generatedAt: "x", url: "http://127.0.0.1:4000/a", escaped: "http:\\/\\/127.0.0.1:4000\\/b", posts: [{ id: 1, modifiedGmt: "t", title: "T" }], headers: { date: "d", "content-type": "json" }, timingMs: 12 };
  assert.deepEqual(normalizeForReplay(value, "wordpress-state", "http://127.0.0.1:4000"), {
    generatedAt: "x",
    url: "{siteUrl}/a",
    escaped: "{siteUrl}\\/b",
    posts: [{ id: 1, modifiedGmt: "t", title: "T" }],
    headers: { date: "d", "content-type": "json" },
  });
  assert.deepEqual(normalizeForReplay({ id: "exec-1", startedAt: "s", finishedAt: "f", durationMs: 3, status: "ok" }, "command-result", ""), { status: "ok" });
  assert.ok(EPISODE_REPLAY_VOLATILE_FIELDS.every((f) => f.reason.length > 0));
});

test("state request normalisation: defaults and identity fields need redaction none", () => {
  assert.deepEqual(normalizeWordPressStateRequest({ type: "wordpress-state" }), { sections: ["summary"], optionNames: [], userFields: ["roles"], includeContent: false, redaction: "safe" });
  assert.throws(() => normalizeWordPressStateRequest({ type: "wordpress-state", userFields: ["user_login"] }), { code: "invalid-state-request" });
  assert.equal(normalizeWordPressStateRequest({ type: "wordpress-state", userFields: ["user_login"], redaction: "none" }).redaction, "none");
});
