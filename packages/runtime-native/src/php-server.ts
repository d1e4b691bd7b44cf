/**
 * The warm PHP process of a native sandbox (`php/server.php`, confined): one run at a time, each in
 * a forked child, so a run costs a fork and a WordPress load from OPcache's shared memory instead
 * of starting bubblewrap and PHP; after a WordPress run the next child loads WordPress before its
 * request comes, and while commands come back to back more children load it beside the running
 * one, each used only if nothing wrote to the database or changed a file meanwhile (see
 * server.php). A run's output is what the process printed between the request and the run's
 * marker (random per run). A run that must stop (deadline, interrupt) is killed by
 * the server, which lives on; a server that does not end it in time is killed itself, and the next
 * run starts a new one.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { PHP_LIMITS, confinedCommand } from "./bubblewrap.js";
import { killConfined, type CapturedStream, type ProcessOutcome } from "./confined-process.js";
import { PHP_INI } from "./native-php.js";
import { SANDBOX_PATHS, phpBinds, type SiteLayout } from "./native-site.js";
import type { Bind } from "./bubblewrap.js";
import type { NativeTools } from "./native-tools.js";
import type { SandboxNetwork } from "./native-network.js";

/** One stream of the current run: bytes kept up to the cap, total bytes, and the search for the marker. */
export class RunStream {
  private parts: Buffer[] = [];
  private kept = 0;
  private total = 0;
  /** Tail of what came so far, long enough to hold a marker split across chunks. */
  private pending = Buffer.alloc(0);
  constructor(private readonly capBytes: number, private readonly marker: Buffer) {}

  /** Takes a chunk; returns what followed the marker (the marker's own suffix) once it arrived. */
  push(chunk: Buffer): Buffer | undefined {
    const data = Buffer.concat([this.pending, chunk]);
    const at = data.indexOf(this.marker);
    if (at >= 0) {
      this.keep(data.subarray(0, at));
      this.pending = Buffer.alloc(0);
      return data.subarray(at + this.marker.length);
    }
    const hold = Math.min(data.length, this.marker.length - 1);
    this.keep(data.subarray(0, data.length - hold));
    this.pending = Buffer.from(data.subarray(data.length - hold));
    return undefined;
  }

  private keep(data: Buffer): void {
    this.total += data.length;
    if (this.kept >= this.capBytes) return;
    const part = data.length > this.capBytes - this.kept ? data.subarray(0, this.capBytes - this.kept) : data;
    this.parts.push(Buffer.from(part));
    this.kept += part.length;
  }

  /**
   * What the run printed so far. The held-back tail counts as output: a run stopped before its
   * marker (deadline, interrupt, crash) printed it, and a finished run has none left.
   */
  value(): CapturedStream {
    const room = Math.max(0, this.capBytes - this.kept);
    const tail = this.pending.subarray(0, room);
    const bytes = this.total + this.pending.length;
    return { data: Buffer.concat([...this.parts, tail]), bytes, truncated: bytes > this.kept + tail.length };
  }
}

/**
 * The TCP connections made in the warm process's network namespace during a run: `accepted` by a
 * listener there (the relays, each connection on its way to the host's socket), connects
 * `attempted` by the run (refused ones included).
 */
export interface RunConnections {
  accepted: number;
  attempted: number;
}

/** A run's outcome, with the connections it made when the server could count them. */
export type RunOutcome = ProcessOutcome & { connections?: RunConnections };

/**
 * Reads what follows a run's stdout marker: `:<exit code>[:<accepted>:<attempted>]\0`.
 * @returns undefined until the whole of it arrived.
 */
export function parseRunEnd(after: string): { exitCode: number; connections?: RunConnections } | undefined {
  const m = /^:(\d+)(?::(\d+):(\d+))?\0/.exec(after);
  if (!m) return undefined;
  return { exitCode: Number(m[1]), ...(m[2] !== undefined ? { connections: { accepted: Number(m[2]), attempted: Number(m[3]) } } : {}) };
}

/** The current run's state. */
interface CurrentRun {
  /** The process the run was sent to (output of an earlier, killed one is not the run's). */
  child: ChildProcess;
  stdout: RunStream;
  stderr: RunStream;
  stdoutDone?: Buffer;
  stderrDone: boolean;
  resolve(outcome: RunOutcome): void;
  done?: Promise<RunOutcome>;
}

/** What a run runs: a sandbox path, what it loads first, and as whom (a user id, or the first administrator). */
export interface RunRequest {
  file: string;
  bootstrap: "wordpress" | "none";
  user: number | "admin";
}

/** The caller's code of a run: the file's name in the internal `code/` folder, and its text. */
export interface RunCode {
  name: string;
  source: string;
}

/** How long a stopped run may take to end before the whole server is killed (ms). */
const STOP_GRACE_MS = 3_000;

/** What a server needs to start. */
export interface PhpServerSetup {
  tools: NativeTools;
  layout: SiteLayout;
  treeDir: string;
  extraBinds: Bind[];
  env: Record<string, string>;
  /** The sandbox's network (hosts file, relay ports, proxy environment), read when the process starts. */
  network?: SandboxNetwork;
}

export class PhpServer {
  private child: ChildProcess | undefined;
  private current: CurrentRun | undefined;

  constructor(private readonly setup: PhpServerSetup) {}

  /** Starts the process now if it is not running (boot overlaps its start with MariaDB's). */
  warm(): void {
    if (!this.child) this.start();
  }

  private start(): ChildProcess {
    const ini = PHP_INI.flatMap((setting) => ["-d", setting]);
    const { argv, env } = confinedCommand(
      this.setup.tools,
      {
        binds: [...phpBinds(this.setup.layout, this.setup.treeDir), ...this.setup.extraBinds, ...(this.setup.network?.binds ?? [])],
        chdir: SANDBOX_PATHS.wordpress,
        limits: PHP_LIMITS,
        env: { ...this.setup.env, ...(this.setup.network?.env ?? {}) },
        uid: this.setup.layout.uid,
        relay: this.setup.network?.listeners ?? [],
      },
      // OPcache's shared memory lives in this process and its forks: that is what stays warm. The
      // realpath cache the server fills once at start is kept for an hour instead of 2 minutes.
      [this.setup.tools.php, ...ini, "-d", "opcache.file_cache_only=0", "-d", "realpath_cache_ttl=3600", `${SANDBOX_PATHS.programs}/server.php`],
    );
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], env });
    child.stdin!.on("error", () => undefined);
    child.stdout!.on("data", (chunk: Buffer) => this.onData(child, "stdout", chunk));
    child.stderr!.on("data", (chunk: Buffer) => this.onData(child, "stderr", chunk));
    child.once("close", (code, signal) => {
      if (this.child === child) this.child = undefined;
      // The process died under a run (killed, or PHP's engine crashed): the run ends with what it printed.
      const run = this.current;
      if (run && run.child === child) {
        this.current = undefined;
        run.resolve({ exitCode: code ?? 128, signal, stdout: run.stdout.value(), stderr: run.stderr.value() });
      }
    });
    child.once("error", () => undefined);
    this.child = child;
    return child;
  }

  private onData(child: ChildProcess, stream: "stdout" | "stderr", chunk: Buffer): void {
    const run = this.current;
    if (!run || run.child !== child) return;
    if (stream === "stdout" && run.stdoutDone === undefined) {
      const rest = run.stdout.push(chunk);
      if (rest !== undefined) run.stdoutDone = rest;
    } else if (stream === "stdout" && run.stdoutDone !== undefined) {
      run.stdoutDone = Buffer.concat([run.stdoutDone, chunk]);
    } else if (stream === "stderr" && !run.stderrDone) {
      if (run.stderr.push(chunk) !== undefined) run.stderrDone = true;
    }
    const end = run.stdoutDone ? parseRunEnd(run.stdoutDone.toString("latin1")) : undefined;
    if (end !== undefined && run.stderrDone) {
      this.current = undefined;
      run.resolve({ exitCode: end.exitCode, signal: null, stdout: run.stdout.value(), stderr: run.stderr.value(), ...(end.connections ? { connections: end.connections } : {}) });
    }
  }

  /**
   * Runs runner.php and resolves with its outcome (with the connections it made, unless the process
   * died under it). The request and the code reach the server on its input, and the server clears
   * the last run's files (`last-error.json`, `actor-missing`) and writes the code file itself: a run
   * touches no file of the sandbox from the host.
   * @param capBytes - bytes kept per stream.
   * @param request - the file to run (a sandbox path), what it loads, and its actor.
   * @param next - what the next run will most likely load (default: what this one loads);
   *   "wordpress" has the server load WordPress for it in a new child as soon as this run ends.
   * @param code - written as `code/<name>` of the internal folder before the run (`name` has no `/`).
   */
  run(capBytes: number, request: RunRequest, next: "wordpress" | "none" = request.bootstrap, code?: RunCode): { done: Promise<RunOutcome>; partial(): { stdout: CapturedStream; stderr: CapturedStream }; kill(): void } {
    const bootstrap = request.bootstrap;
    const child = this.child ?? this.start();
    const marker = randomBytes(16).toString("hex");
    const needle = Buffer.from(`\0${marker}`);
    const run: Partial<CurrentRun> = { child, stdout: new RunStream(capBytes, needle), stderr: new RunStream(capBytes, Buffer.from(`\0${marker}\0`)), stderrDone: false };
    const done = new Promise<RunOutcome>((resolve) => (run.resolve = resolve));
    run.done = done;
    this.current = run as CurrentRun;
    child.stdin!.write(`${JSON.stringify({ marker, bootstrap, next, request, ...(code ? { code } : {}) })}\n`);
    return {
      done,
      partial: () => ({ stdout: run.stdout!.value(), stderr: run.stderr!.value() }),
      kill: () => this.stopRun(run as CurrentRun),
    };
  }

  /**
   * Stops a run: the server kills the run's processes and stays warm (OPcache too). When the
   * server does not end the run within `STOP_GRACE_MS` (it is stuck), it is killed itself.
   */
  private stopRun(run: CurrentRun): void {
    if (this.current !== run || run.child !== this.child) return;
    run.child.stdin!.write(`${JSON.stringify({ kill: true })}\n`);
    const timer = setTimeout(() => {
      if (this.current === run) this.kill();
    }, STOP_GRACE_MS);
    timer.unref();
    void run.done?.then(() => clearTimeout(timer));
  }

  /** Kills the process (and so the run in it); the next run starts a new one. */
  kill(): void {
    const child = this.child;
    this.child = undefined;
    if (child) killConfined(child);
  }
}
