/**
 * Saving the clean copy of a native site's database (`php/clean-db.php`, action "save"): it writes
 * `wp_codebox_clean`, which only MariaDB's root may, so it runs in a confined PHP process of its
 * own with root's password in its environment and OPcache off. The sandbox's warm PHP process (and
 * its OPcache, in shared memory and in the sandbox's files) is writable by the sandbox's own code:
 * it never sees root. (A restore needs only WordPress's own account and runs in the warm process.)
 */
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { HOST_STEP_DEADLINE_MS } from "./confined-process.js";
import { startPhp } from "./native-php.js";
import { SANDBOX_PATHS, type SiteLayout } from "./native-site.js";
import type { NativeTools } from "./native-tools.js";

/**
 * Saves the `wordpress` database into `wp_codebox_clean`.
 * @returns the clean tables' signatures (JSON bytes), which a restore is handed.
 * @throws `boot-failed` with what PHP printed when the run fails or passes its deadline (2 min).
 */
export async function saveCleanDb(tools: NativeTools, site: SiteLayout, treeDir: string, rootPassword: string): Promise<Buffer> {
  const run = await startPhp({
    tools,
    layout: site,
    treeDir,
    script: `${SANDBOX_PATHS.programs}/clean-db.php`,
    args: ["save"],
    capBytes: 16 << 20,
    deadlineMs: HOST_STEP_DEADLINE_MS,
    env: { WP_CODEBOX_DB_ROOT_PASSWORD: rootPassword },
    ini: ["opcache.enable_cli=0"],
  }).done;
  const stdout = run.stdout.data.toString("utf8");
  let signatures: unknown;
  try {
    signatures = run.exitCode === 0 && !run.stdout.truncated ? (JSON.parse(stdout) as { signatures?: unknown }).signatures : undefined;
  } catch {
    signatures = undefined;
  }
  if (signatures === undefined || signatures === null || typeof signatures !== "object") {
    const said = `${run.stderr.data.toString("utf8")}\n${stdout}`.trim().slice(-800);
    throw new WpCodeboxError("boot-failed", `The sandbox's database could not be saved (exit ${run.exitCode}${run.signal ? `, ${run.signal}` : ""}): ${said || "(no output)"}`);
  }
  return Buffer.from(JSON.stringify(signatures));
}
