/**
 * The evidence one sandbox gathers for its bundle: execution results, lifecycle events, files
 * commands and observations wrote, database errors per running command, browser assertions and
 * PHPUnit test counts. Everything is kept
 * in the order it happened; `collect` hands it to the bundle writer. Past a memory budget, large
 * output and file contents live in files of the sandbox directory (`evidence-spill.ts`).
 */
import {
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
import { BackgroundErrors } from "./background-errors.js";
import { EvidenceSpill } from "./evidence-spill.js";
import type { DbError } from "../worker/php-worker-protocol.js";
import { actionSummaryFile, assertionsBlock, mergeBundleFiles, testsBlock, type CommandOutcome } from "@wp-codebox/commands";

type Assertions = NonNullable<CommandOutcome["assertions"]>;

export class EvidenceLedger {
  readonly results: ExecutionResult[] = [];
  readonly events: RuntimeEvent[] = [];
  private readonly files: ArtifactFile[] = [];
  private readonly assertions: Assertions[] = [];
  private readonly testCounts: TestCounts[] = [];
  private readonly artifactDirectories = new Map<string, number>();
  /** What each finished command added (files, assertions, test counts), by execution id: `collect({ executions })`. */
  private readonly byExecution = new Map<string, { files: ArtifactFile[]; assertions?: Assertions; tests?: TestCounts }>();
  /** Database errors of each running command, by execution id (filled by its PHP runs and HTTP requests). */
  private readonly dbErrorsByExecution = new Map<string, DbError[]>();
  /** PHP fatals of background requests (WP-Cron, loopbacks), collected per running command. */
  readonly background = new BackgroundErrors();
  /** Everything stays in memory until `spillTo` names a folder. */
  private spill = new EvidenceSpill(undefined);

  /**
   * Lets values recorded from now on go to files in `dir` once more than `budgetBytes` (default
   * 64 MiB) of evidence is held in memory.
   */
  spillTo(dir: string, budgetBytes?: number): void {
    this.spill = new EvidenceSpill(dir, budgetBytes);
  }

  /** Bytes of evidence held in memory (an estimate, counted once `spillTo` named a folder; spilled values count as nothing). */
  get heldBytes(): number {
    return this.spill.heldBytes;
  }

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
      const files = (outcome.files ?? []).map((f) => this.spill.keepFile(f));
      this.addFiles(files);
      if (outcome.assertions) this.assertions.push(outcome.assertions);
      if (outcome.tests) this.testCounts.push(outcome.tests);
      this.byExecution.set(result.id, { files, ...(outcome.assertions ? { assertions: outcome.assertions } : {}), ...(outcome.tests ? { tests: outcome.tests } : {}) });
    }
    this.results.push(this.spill.keepResult(result));
  }

  /** Adds bundle files; a `.jsonl` file that exists already is appended to (browser steps.jsonl across commands). */
  addFiles(files: ArtifactFile[]): void {
    for (const file of files) {
      const existing = this.files.findIndex((f) => f.path === file.path);
      if (existing >= 0 && file.path.endsWith(".jsonl")) this.files[existing] = this.spill.appendToFile(this.files[existing]!, String(file.content));
      else if (existing >= 0) this.files[existing] = this.spill.keepFile(file);
      // A .jsonl file grows in place: its own copy, so the command that wrote its first lines keeps them alone.
      else this.files.push(file.path.endsWith(".jsonl") ? this.spill.keepFile({ ...file }) : this.spill.keepFile(file));
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
    this.byExecution.clear();
    this.spill.clear();
  }

  /**
   * Everything gathered so far, for `writeArtifactBundle`: with browser assertions, a
   * `files/browser/action-summary.json`; with `includeRuntimeSnapshotBundles`, every snapshot taken.
   */
  collect(info: RuntimeInfo, secrets: string[], snapshots: Iterable<WordPressRuntimeSnapshot>, spec?: ArtifactSpec): RuntimeArtifacts {
    if (spec?.executions) return this.collectExecutions(info, secrets, spec.executions);
    const assertions = assertionsBlock(this.assertions);
    const files = [...this.files];
    const snapshotRefs = spec?.includeRuntimeSnapshotBundles
      ? [...snapshots].map((snapshot) => {
          const bundled = runtimeSnapshotBundleFiles(snapshot);
          files.push(...bundled.files);
          return bundled.ref;
        })
      : [];
    if (assertions) files.push(actionSummaryFile(this.results, assertions));
    const tests = testsBlock(this.testCounts);
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

  /**
   * What the given executions did (`ArtifactSpec.executions`): their results, the files they
   * wrote, their browser assertions and test counts, the events recorded between the first one's
   * start and the last one's end, and the boot events. No snapshots: a client that took one
   * collects them with a whole-sandbox `collect`.
   */
  private collectExecutions(info: RuntimeInfo, secrets: string[], ids: string[]): RuntimeArtifacts {
    const wanted = new Set(ids);
    const results = this.results.filter((r) => wanted.has(r.id));
    const files: ArtifactFile[] = [];
    const assertionList: Assertions[] = [];
    const testList: TestCounts[] = [];
    for (const result of results) {
      const added = this.byExecution.get(result.id);
      if (!added) continue;
      mergeBundleFiles(files, added.files);
      if (added.assertions) assertionList.push(added.assertions);
      if (added.tests) testList.push(added.tests);
    }
    const from = results.reduce((min, r) => (r.startedAt < min ? r.startedAt : min), "\uffff");
    const to = results.reduce((max, r) => (r.finishedAt > max ? r.finishedAt : max), "");
    const events = this.events.filter((e) => BOOT_EVENTS.has(e.type) || (e.at >= from && e.at <= to));
    const assertions = assertionsBlock(assertionList);
    if (assertions) files.push(actionSummaryFile(results, assertions));
    const tests = testsBlock(testList);
    return {
      info,
      results,
      events,
      files,
      secrets,
      ...(assertions || tests ? { review: { ...(assertions ? { assertions } : {}), ...(tests ? { tests } : {}) } } : {}),
    };
  }
}

/** Events that say how the sandbox started: every selection of a bundle keeps them. */
const BOOT_EVENTS = new Set(["runtime-booted", "wordpress-release", "inputs-activated", "cron-fast-forwarded", "runtime-recycled"]);
