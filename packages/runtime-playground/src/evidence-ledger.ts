/**
 * The evidence one sandbox gathers for its bundle: execution results, lifecycle events, files
 * commands and observations wrote, database errors per running command, browser assertions and
 * PHPUnit test counts. Everything is kept
 * in the order it happened; `collect` hands it to the bundle writer.
 */
import {
  isBrowserCommand,
  runtimeSnapshotBundleFiles,
  type ArtifactFile,
  type ArtifactSpec,
  type ExecutionResult,
  type RuntimeArtifacts,
  type RuntimeEvent,
  type RuntimeInfo,
  type TestCounts,
  type WordPressRuntimeSnapshot,
} from "@wp-codebox/runtime-core";
import type { CommandOutcome } from "./commands/command-context.js";
import type { DbError } from "./php-worker-protocol.js";

type Assertions = NonNullable<CommandOutcome["assertions"]>;

export class EvidenceLedger {
  readonly results: ExecutionResult[] = [];
  readonly events: RuntimeEvent[] = [];
  private readonly files: ArtifactFile[] = [];
  private readonly assertions: Assertions[] = [];
  private readonly testCounts: TestCounts[] = [];
  private readonly artifactDirectories = new Map<string, number>();
  /** Database errors of each running command, by execution id (filled by its PHP runs and HTTP requests). */
  private readonly dbErrorsByExecution = new Map<string, DbError[]>();

  /** Records a lifecycle event `{ at: ISO-8601 now, type, data? }`. */
  event(type: string, data?: Record<string, unknown>): void {
    this.events.push({ at: new Date().toISOString(), type, ...(data ? { data } : {}) });
  }

  /** Starts collecting the database errors of a command that starts running. */
  openDbErrors(executionId: string): DbError[] {
    const dbErrors: DbError[] = [];
    this.dbErrorsByExecution.set(executionId, dbErrors);
    return dbErrors;
  }

  /** Stops collecting a finished command's database errors. */
  closeDbErrors(executionId: string): void {
    this.dbErrorsByExecution.delete(executionId);
  }

  /** Adds database errors of one PHP run or request of a running command. */
  addDbErrors(executionId: string, dbErrors: DbError[] | undefined): void {
    if (dbErrors?.length) this.dbErrorsByExecution.get(executionId)?.push(...dbErrors);
  }

  /** Adds database errors of loopback traffic (a browser): it belongs to every command running now. */
  addDbErrorsToRunning(dbErrors: DbError[] | undefined): void {
    if (dbErrors?.length) for (const list of this.dbErrorsByExecution.values()) list.push(...dbErrors);
  }

  /** Records a finished command: its result, and the files, assertions and test counts its handler returned. */
  recordCommand(result: ExecutionResult, outcome: CommandOutcome | "timed-out"): void {
    if (outcome !== "timed-out") {
      if (outcome.files) this.addFiles(outcome.files);
      if (outcome.assertions) this.assertions.push(outcome.assertions);
      if (outcome.tests) this.testCounts.push(outcome.tests);
    }
    this.results.push(result);
  }

  /** Adds bundle files; a `.jsonl` file that exists already is appended to (browser steps.jsonl across commands). */
  addFiles(files: ArtifactFile[]): void {
    for (const file of files) {
      const existing = this.files.findIndex((f) => f.path === file.path);
      if (existing >= 0 && file.path.endsWith(".jsonl")) {
        const before = this.files[existing]!;
        this.files[existing] = { ...before, content: `${String(before.content)}${String(file.content)}` };
      } else if (existing >= 0) {
        this.files[existing] = file;
      } else {
        this.files.push(file);
      }
    }
  }

  /** Next free bundle folder `files/observations/<prefix>-<0001>`. */
  nextArtifactDirectory(prefix: string): string {
    const n = (this.artifactDirectories.get(prefix) ?? 0) + 1;
    this.artifactDirectories.set(prefix, n);
    return `files/observations/${prefix}-${String(n).padStart(4, "0")}`;
  }

  /** Screenshot names already used in the bundle (never overwritten). */
  reservedScreenshotNames(): string[] {
    return this.files.filter((f) => f.kind === "browser-screenshot").map((f) => f.path.replace(/^files\/browser\/screenshot-/, "").replace(/\.png$/, ""));
  }

  /**
   * Forgets everything recorded except the `runtime-booted` event, so a bundle still says how the
   * site started.
   */
  forget(): void {
    const boot = this.events.find((e) => e.type === "runtime-booted");
    this.results.length = 0;
    this.events.length = 0;
    if (boot) this.events.push(boot);
    this.files.length = 0;
    this.assertions.length = 0;
    this.testCounts.length = 0;
    this.artifactDirectories.clear();
  }

  /** The browser assertions of every command so far, as one block. */
  private assertionsBlock(): Assertions | undefined {
    if (this.assertions.length === 0) return undefined;
    return {
      total: this.assertions.reduce((n, a) => n + a.total, 0),
      passed: this.assertions.reduce((n, a) => n + a.passed, 0),
      failed: this.assertions.reduce((n, a) => n + a.failed, 0),
      results: this.assertions.flatMap((a) => a.results),
    };
  }

  /** The test counts of every wordpress.phpunit command so far, summed (review.json `tests`). */
  private testsBlock(): TestCounts | undefined {
    if (this.testCounts.length === 0) return undefined;
    const sum = (key: keyof TestCounts) => this.testCounts.reduce((n, c) => n + c[key], 0);
    return {
      tests: sum("tests"),
      assertions: sum("assertions"),
      failures: sum("failures"),
      errors: sum("errors"),
      skipped: sum("skipped"),
      incomplete: sum("incomplete"),
      warnings: sum("warnings"),
      risky: sum("risky"),
      passed: sum("passed"),
    };
  }

  /**
   * Everything gathered so far, for `writeArtifactBundle`: with browser assertions, a
   * `files/browser/action-summary.json`; with `includeRuntimeSnapshotBundles`, every snapshot taken.
   */
  collect(info: RuntimeInfo, secrets: string[], snapshots: Iterable<WordPressRuntimeSnapshot>, spec?: ArtifactSpec): RuntimeArtifacts {
    const assertions = this.assertionsBlock();
    const files = [...this.files];
    const snapshotRefs = spec?.includeRuntimeSnapshotBundles
      ? [...snapshots].map((snapshot) => {
          const bundled = runtimeSnapshotBundleFiles(snapshot);
          files.push(...bundled.files);
          return bundled.ref;
        })
      : [];
    if (assertions) {
      const browserResults = this.results.filter((r) => isBrowserCommand(r.command));
      files.push({
        path: "files/browser/action-summary.json",
        kind: "browser-action-summary",
        contentType: "application/json",
        content: `${JSON.stringify({ executions: browserResults.map((r) => ({ id: r.id, command: r.command, status: r.status, ...(r.error ? { error: r.error } : {}) })), assertions }, null, 2)}\n`,
      });
    }
    const tests = this.testsBlock();
    return {
      info,
      results: [...this.results],
      events: [...this.events],
      files,
      secrets,
      ...(assertions || tests ? { review: { ...(assertions ? { assertions } : {}), ...(tests ? { tests } : {}) } } : {}),
      ...(snapshotRefs.length ? { snapshots: snapshotRefs } : {}),
    };
  }
}
