/**
 * CLI-only failures that are not a runtime-core condition: usage errors reported by commander,
 * interrupts, and an incomplete environment found by `doctor`. Thrown by commands; the one
 * top-level catch in `cli.ts` prints `error[<code>]: <message>` and exits with `exitCode`.
 */
import { join } from "node:path";
import { REPORT_PAGE_PATH, WpCodeboxError, errorMessage, exitCodeForCategory, type ErrorCode, type RunSessionOutcome, type SessionBundle } from "@wp-codebox/runtime-core";

/** Exit codes of the CLI. */
export const EXIT_CODES = {
  ok: 0,
  sandboxFailed: 1,
  invalidInput: 2,
  environment: 3,
  internal: 70,
  /** 128 + SIGINT (2). */
  sigint: 130,
  /** 128 + SIGTERM (15). */
  sigterm: 143,
} as const;

/** A failure with a registered `code` (`ERROR_CODES`) and the exit code the CLI ends with. */
export class CliExitError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;
  readonly data: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, exitCode: number, data: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CliExitError";
    this.code = code;
    this.exitCode = exitCode;
    this.data = data;
  }
}

/** The code, message and exit code of anything thrown (unknown errors are internal: 70). */
export function describeFailure(error: unknown): { code: ErrorCode; message: string; exitCode: number; data?: Record<string, unknown> } {
  if (error instanceof CliExitError) return { code: error.code, message: error.message, exitCode: error.exitCode, data: error.data };
  if (error instanceof WpCodeboxError) {
    return { code: error.code, message: error.message, exitCode: exitCodeForCategory(error.category), data: error.data };
  }
  return { code: "internal-error", message: errorMessage(error), exitCode: EXIT_CODES.internal };
}

/**
 * The exit error of a finished run session, or undefined when it succeeded (exit code 0).
 * @param fallback - code and message when the work itself failed (a command error, a failed
 *   expectation or episode step) rather than an error stopping it.
 */
export function sessionExitError(outcome: RunSessionOutcome, fallback: { code: ErrorCode; message: string }): CliExitError | undefined {
  if (outcome.exitCode === EXIT_CODES.ok) return undefined;
  const lost = bundleLostError(outcome.bundle);
  if (lost) return lost;
  if (outcome.error) return new CliExitError(outcome.error.code, outcome.error.message, outcome.exitCode, outcome.error.data ?? {});
  if (!outcome.bundle.valid) {
    return new CliExitError("bundle-invalid", `The bundle in ${outcome.bundle.directory} failed verification (a wp-codebox bug; please report it).`, outcome.exitCode);
  }
  return new CliExitError(fallback.code, fallback.message, outcome.exitCode);
}

/**
 * The exit error (exit 3, `artifacts-dir-unwritable`) of a run whose bundle could not be written
 * after the work ran, or undefined when the bundle was written.
 */
export function bundleLostError(bundle: SessionBundle): CliExitError | undefined {
  if (bundle.written !== false) return undefined;
  const error = bundle.error ?? { code: "artifacts-dir-unwritable", message: `The bundle could not be written to ${bundle.directory}.` };
  return new CliExitError(error.code, error.message, EXIT_CODES.environment, error.data ?? {});
}

/**
 * The last line of a human summary: `report:   <bundle>/report.html`, or "" when no bundle was
 * written (ends with a newline when not empty).
 */
export function reportPageLine(bundle: SessionBundle): string {
  return bundle.written === false ? "" : `report:   ${join(bundle.directory, REPORT_PAGE_PATH)}\n`;
}

/** The value of the human `verify:` line: `valid`, `INVALID`, or `NOT WRITTEN (why)`. */
export function bundleVerifyText(bundle: SessionBundle): string {
  if (bundle.written === false) return `NOT WRITTEN (${bundle.error?.data?.cause ?? bundle.error?.code ?? "write failed"})`;
  return bundle.valid ? "valid" : "INVALID";
}
