/**
 * Batch progress on stderr. On a terminal: a `cli-progress` bar (done/total, passed, failed, ETA)
 * with one line logged above it per finished task. Elsewhere (CI logs, pipes): one plain line per
 * finished task with the same counts and ETA, since a redrawn bar is noise in a log file.
 */
import cliProgress from "cli-progress";
import type { BatchTaskResult } from "@wp-codebox/runtime-core";

/** What the batch runners report to. */
export interface BatchProgress {
  /** A task finished (or was kept from an earlier run). */
  taskDone(result: BatchTaskResult): void;
  /** A free-form note (queue connection, retries). */
  note(message: string): void;
  stop(): void;
}

/** Options of `createProgress`. */
export interface ProgressOptions {
  total: number;
  /** Where to write; default `process.stderr`. */
  stream?: NodeJS.WriteStream | { write(text: string): unknown; isTTY?: boolean };
  /** Force the bar on or off (default: when the stream is a terminal). */
  bar?: boolean;
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function describe(result: BatchTaskResult): string {
  if (result.resumed) return `${result.id} ${result.status} (kept: its bundle verifies)`;
  const error = result.status === "failed" && result.error ? ` — ${result.error.code}: ${result.error.message.split("\n")[0]!.slice(0, 160)}` : "";
  return `${result.id} ${result.status} in ${secs(result.durationMs)}${error}`;
}

/** Creates the progress display for a batch of `total` tasks. */
export function createProgress(options: ProgressOptions): BatchProgress {
  const stream = options.stream ?? process.stderr;
  const useBar = options.bar ?? Boolean(stream.isTTY);
  let done = 0;
  let passed = 0;
  let failed = 0;
  let ran = 0;
  const started = Date.now();
  const count = (r: BatchTaskResult) => {
    done++;
    if (r.status === "passed") passed++;
    else failed++;
    if (!r.resumed) ran++;
  };
  if (useBar) {
    const multibar = new cliProgress.MultiBar(
      {
        stream: stream as NodeJS.WritableStream,
        format: "batch |{bar}| {value}/{total} done | {passed} passed | {failed} failed | ETA {eta_formatted}",
        hideCursor: true,
        clearOnComplete: false,
        stopOnComplete: false,
        etaBuffer: 20,
      },
      cliProgress.Presets.shades_classic,
    );
    const bar = multibar.create(options.total, 0, { passed: 0, failed: 0 });
    return {
      taskDone(result) {
        count(result);
        multibar.log(`${describe(result)}\n`);
        bar.update(done, { passed, failed });
      },
      note(message) {
        multibar.log(`${message}\n`);
      },
      stop() {
        multibar.stop();
      },
    };
  }
  return {
    taskDone(result) {
      count(result);
      const perTask = ran > 0 ? (Date.now() - started) / ran : 0;
      const eta = done < options.total && ran > 0 ? ` · ETA ${secs(perTask * (options.total - done))}` : "";
      stream.write(`[${done}/${options.total}] ${describe(result)} · ${passed} passed, ${failed} failed${eta}\n`);
    },
    note(message) {
      stream.write(`${message}\n`);
    },
    stop() {},
  };
}
