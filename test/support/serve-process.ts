/**
 * A `wp-codebox serve --json` child process for tests: started from the CLI entry the suite uses
 * (source or built, see cli-entry.ts), resolved once serve printed its address (the first stdout
 * line), with its stderr kept and its JSON events readable.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";
import { CLI_ENTRY } from "./cli-entry.js";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The address serve prints first: where its control socket listens, its token and the site URL. */
export interface ServeAddress {
  control: string;
  token: string;
  url: string;
  [key: string]: unknown;
}

/** One serve event from stderr (`--json` prints each as a JSON line). */
export interface ServeEvent {
  event: string;
  data?: Record<string, unknown>;
}

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  address: ServeAddress;
  /** Everything serve wrote to stderr so far. */
  stderr(): string;
  /** The JSON events on stderr so far, in order. */
  events(): ServeEvent[];
  /**
   * Resolves once stderr holds `count` events named `event`; rejects when serve exits first. Polls
   * every 50 ms: the test's own timeout bounds the wait.
   */
  waitForEvent(event: string, count?: number): Promise<void>;
  /** Resolves with serve's exit code when it ended (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Ends serve (SIGTERM, so it cleans up) and resolves when it exited; a no-op once it has. */
  stop(): Promise<void>;
}

/**
 * Starts `wp-codebox serve --json ARGS` and resolves with its address once the first stdout line
 * arrived (WordPress booted and the control socket listens).
 * @param args - serve's arguments after `serve --json`.
 * @param options.env - the child's whole environment (default: this process's).
 * @throws Error with serve's stderr when it exits before printing its address.
 */
export async function startServe(args: readonly string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...CLI_ENTRY, "serve", "--json", ...args], { cwd: REPO_ROOT, env: options.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
    });
    child.on("close", (code) => reject(new Error(`serve exited ${code} before printing its address:\n${stderr}`)));
  });
  // Whole lines only: the text after the last newline may be an event still arriving.
  const events = (): ServeEvent[] => stderr.split("\n").slice(0, -1).filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as ServeEvent);
  return {
    child,
    address: JSON.parse(line) as ServeAddress,
    stderr: () => stderr,
    events,
    exited,
    async waitForEvent(event, count = 1) {
      while (events().filter((e) => e.event === event).length < count) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`serve exited ${child.exitCode ?? child.signalCode} before ${count} ${event} event(s):\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await exited;
    },
  };
}
