/**
 * PHP fatals of background requests (a WP-Cron run a page load spawned, a loopback request PHP
 * made to its own site) belong to the commands running when they happen: each running command
 * collects them, and its result lists them as `backgroundErrors` and, unless the command's
 * `background-errors=record` arg says otherwise, becomes an error (`php-fatal`, `data.background`).
 * A background request runs before the command's result is returned (the dispatcher waits for
 * the self-calls to settle), so a cron run a command set off is counted against that command.
 */
import type { BackgroundErrorRecord, ExecutionResult } from "@wp-codebox/runtime-core";

/** The background errors of each running command, by execution id. */
export class BackgroundErrors {
  private readonly byExecution = new Map<string, BackgroundErrorRecord[]>();

  /** Starts collecting for a command that starts running. */
  open(executionId: string): void {
    this.byExecution.set(executionId, []);
  }

  /** Adds one background fatal to every command running now. */
  addToRunning(record: BackgroundErrorRecord): void {
    for (const list of this.byExecution.values()) list.push(record);
  }

  /** Stops collecting for a command. @returns what it collected, in order. */
  close(executionId: string): BackgroundErrorRecord[] {
    const list = this.byExecution.get(executionId) ?? [];
    this.byExecution.delete(executionId);
    return list;
  }
}

/** The background-errors arg's values; anything else is refused by the catalog before this runs. */
export type BackgroundErrorsMode = "fail" | "record";

/**
 * Puts a command's background fatals in its result (changes `result` in place): `backgroundErrors`
 * always, and with mode `fail` an `ok` result becomes `status: "error"`, exit code 1 and error
 * `php-fatal` naming the first fatal's message, file, line and request, with
 * `data: { background: true, url, file, line, count }`. A result that already failed keeps its own error.
 */
export function applyBackgroundErrors(result: ExecutionResult, errors: readonly BackgroundErrorRecord[], mode: BackgroundErrorsMode = "fail"): void {
  if (errors.length === 0) return;
  result.backgroundErrors = [...errors];
  if (mode === "record" || result.status !== "ok") return;
  const first = errors[0]!;
  const where = first.file ? ` in ${first.file}:${first.line}` : "";
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more; see backgroundErrors)` : "";
  result.status = "error";
  result.exitCode = 1;
  result.error = {
    code: "php-fatal",
    message: `${result.command}: a background request it set off (${first.method} ${pathOf(first.url)}) ended in a PHP fatal error: ${first.message}${where}${more}. Fix the code, or pass background-errors=record to only list it.`,
    data: { background: true, url: first.url, file: first.file, line: first.line, count: errors.length },
  };
}

function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  } catch {
    return url;
  }
}
