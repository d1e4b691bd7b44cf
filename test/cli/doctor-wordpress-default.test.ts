/**
 * `doctor`'s `wordpress-default` check: the bundled builds, the cached releases, and whether the
 * default WordPress (no `--wp`) is current, for every state the cache and the environment can be
 * in. No boot and no network: the cache is written by hand as the release cache writes it.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runDoctor, type DoctorCheck } from "@wp-codebox/cli";
import { listWordPressBuilds } from "@wp-codebox/runtime-playground";

const root = mkdtempSync(join(tmpdir(), "wp-codebox-doctor-default-"));
after(() => rmSync(root, { recursive: true, force: true }));
const MIRROR = "http://127.0.0.1:9/";
const bundled = listWordPressBuilds()[0]!.release;

/** A cache holding release `release` (its zip's bytes are not a real release: only the checksum is checked), last confirmed at `checkedAt`. */
function cacheWith(name: string, release?: { release: string; checkedAt?: string }): string {
  const dir = join(root, name);
  mkdirSync(join(dir, "releases"), { recursive: true });
  if (release) {
    const bytes = Buffer.from(`zip of ${release.release}`);
    const file = `wordpress-${release.release}-abc.zip`;
    writeFileSync(join(dir, "releases", file), bytes);
    const record = { requested: "latest", release: release.release, file, checksum: { algorithm: "sha1", value: createHash("sha1").update(bytes).digest("hex"), url: `${MIRROR}latest.zip.sha1` }, mirror: MIRROR, fetchedAt: "2026-01-01T00:00:00Z", ...(release.checkedAt ? { checkedAt: release.checkedAt } : {}) };
    writeFileSync(join(dir, "releases", "latest.json"), JSON.stringify(record));
    writeFileSync(join(dir, "releases", `${release.release}.json`), JSON.stringify({ ...record, requested: release.release }));
  }
  return dir;
}

const now = new Date().toISOString();
const cases: { name: string; cache: () => string; env: Record<string, string>; status: "ok" | "missing"; current: boolean; default: unknown; detail: RegExp }[] = [
  { name: "checked less than a day ago: current", cache: () => cacheWith("fresh", { release: "7.0.4", checkedAt: now }), env: {}, status: "ok", current: true, default: { version: "7.0.4", chosenBy: "latest" }, detail: /default WordPress 7\.0\.4, the newest release at http:\/\/127\.0\.0\.1:9\// },
  { name: "checked two days ago: the next run asks", cache: () => cacheWith("stale", { release: "7.0.4", checkedAt: new Date(Date.now() - 2 * 86_400_000).toISOString() }), env: {}, status: "missing", current: false, default: null, detail: /last checked .*the next run asks the mirror.*WordPress 7\.0\.4, the newest release in the cache/ },
  { name: "never checked, nothing cached", cache: () => cacheWith("empty"), env: {}, status: "missing", current: false, default: null, detail: new RegExp(`never checked.*WordPress ${bundled.replace(/\./g, "\\.")}, the newest bundled build`) },
  { name: "offline: the newest cached release", cache: () => cacheWith("offline", { release: "7.0.4", checkedAt: now }), env: { WP_CODEBOX_OFFLINE: "1" }, status: "missing", current: false, default: { version: "7.0.4", chosenBy: "offline-cached" }, detail: /^offline \(WP_CODEBOX_OFFLINE=1\): the default is WordPress 7\.0\.4/ },
  { name: "pinned by WP_CODEBOX_WP", cache: () => cacheWith("pinned"), env: { WP_CODEBOX_WP: "6.4" }, status: "ok", current: true, default: { version: "6.4", chosenBy: "named" }, detail: /pinned by WP_CODEBOX_WP/ },
  { name: "a check from another mirror does not count", cache: () => cacheWith("other-mirror", { release: "7.0.4", checkedAt: now }), env: { WP_CODEBOX_WORDPRESS_MIRROR: "http://127.0.0.1:10/" }, status: "missing", current: false, default: null, detail: /never checked/ },
  { name: "a bad WP_CODEBOX_WP is named", cache: () => cacheWith("bad-pin"), env: { WP_CODEBOX_WP: "newest" }, status: "missing", current: false, default: null, detail: /WP_CODEBOX_WP="?newest"?: expected a version/ },
];

for (const c of cases) {
  test(`doctor wordpress-default: ${c.name}`, async () => {
    const cacheDir = c.cache();
    const report = await runDoctor({ cacheDir, env: { WP_CODEBOX_WORDPRESS_MIRROR: MIRROR, ...c.env } });
    const check = report.checks.find((x) => x.id === "wordpress-default") as DoctorCheck;
    assert.ok(check, "the check is listed");
    assert.equal(check.required, false, "an unchecked default does not make the machine unready");
    assert.equal(check.status, c.status, check.detail);
    assert.equal(check.data?.current, c.current);
    assert.deepEqual(check.data?.default, c.default);
    assert.match(check.detail, c.detail);
    assert.deepEqual(check.data?.bundled, listWordPressBuilds().map((b) => b.release));
    assert.match(check.detail, new RegExp(`bundled: ${bundled.replace(/\./g, "\\.")}`));
  });
}
