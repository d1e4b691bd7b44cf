/**
 * Test support: a WordPress release mirror on loopback, serving the release zips of the shared
 * test assets (`$WP_CODEBOX_TEST_SHARED/wordpress-releases`, which `.ci/run` sets) in the layout
 * `WP_CODEBOX_WORDPRESS_MIRROR` expects: `wordpress-X.Y.Z.zip` with its `.sha1` beside it, and
 * `latest.zip` (+ `.sha1`) as the newest of them. Tests never reach the internet; without the
 * variable, a test that needs these releases skips with `WORDPRESS_MIRROR_SKIP`.
 */
import { createReadStream, existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";

/** The skip message of every test that needs the shared WordPress releases. */
export const WORDPRESS_MIRROR_SKIP =
  "needs the shared WordPress releases: set WP_CODEBOX_TEST_SHARED to the folder holding wordpress-releases/ (.ci/run sets it from ../shared)";

/** The folder of shared release zips, or undefined when `WP_CODEBOX_TEST_SHARED` is unset or has none. */
export function sharedWordPressReleasesDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const shared = env.WP_CODEBOX_TEST_SHARED;
  if (!shared) return undefined;
  const dir = join(shared, "wordpress-releases");
  return existsSync(dir) && readdirSync(dir).some((f) => /^wordpress-\d+\.\d+(?:\.\d+)?\.zip$/.test(f)) ? dir : undefined;
}

/** A running loopback mirror. */
export interface WordPressMirror {
  /** Base URL ending in `/`: the value for `WP_CODEBOX_WORDPRESS_MIRROR`. */
  url: string;
  /** Releases served (`["6.9.4", "7.0.4"]`), oldest first. */
  releases: string[];
  /** The release `latest.zip` is. */
  latest: string;
  /** Paths asked for, in order (to prove what was or was not fetched). */
  requests: string[];
  close(): Promise<void>;
}

const numeric = (v: string) => v.split(".").map(Number);
function compareVersions(a: string, b: string): number {
  const [x, y] = [numeric(a), numeric(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i += 1) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/**
 * Serves the shared release zips on a random loopback port.
 * @param options.latest - the release `latest.zip` stands for; default the newest served.
 * @throws Error when `WP_CODEBOX_TEST_SHARED` has no releases (check `sharedWordPressReleasesDir()` first and skip).
 */
export async function serveWordPressMirror(options: { latest?: string; env?: NodeJS.ProcessEnv } = {}): Promise<WordPressMirror> {
  const dir = sharedWordPressReleasesDir(options.env);
  if (!dir) throw new Error(WORDPRESS_MIRROR_SKIP);
  const releases = readdirSync(dir)
    .map((f) => /^wordpress-(\d+\.\d+(?:\.\d+)?)\.zip$/.exec(f)?.[1])
    .filter((v): v is string => v !== undefined && existsSync(join(dir, `wordpress-${v}.zip.sha1`)))
    .sort(compareVersions);
  const latest = options.latest ?? releases[releases.length - 1]!;
  if (!releases.includes(latest)) throw new Error(`No wordpress-${latest}.zip with a .sha1 in ${dir}`);
  // URL path → file on disk; nothing else is served.
  const files = new Map<string, string>();
  for (const v of releases) {
    files.set(`/wordpress-${v}.zip`, join(dir, `wordpress-${v}.zip`));
    files.set(`/wordpress-${v}.zip.sha1`, join(dir, `wordpress-${v}.zip.sha1`));
  }
  files.set("/latest.zip", join(dir, `wordpress-${latest}.zip`));
  files.set("/latest.zip.sha1", join(dir, `wordpress-${latest}.zip.sha1`));
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://mirror").pathname;
    requests.push(path);
    const file = files.get(path);
    if (!file) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    if (path.endsWith(".sha1")) {
      res.writeHead(200, { "content-type": "text/plain" }).end(readFileSync(file));
      return;
    }
    res.writeHead(200, { "content-type": "application/zip", "content-length": statSync(file).size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    releases,
    latest,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
