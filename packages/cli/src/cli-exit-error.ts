/**
 * CLI-only failures that are not a runtime-core condition: usage errors reported by commander,
 * interrupts, and an incomplete environment found by `doctor`. Thrown by commands; the one
 * top-level catch in `cli.ts` prints `error[<code>]: <message>` and exits with `exitCode`.
 */
import { WpCodeboxError, exitCodeForCategory } from "@wp-codebox/runtime-core";

/** Exit codes of the CLI (SPEC §5; STYLE §10). */
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

/** A failure with a stable kebab-case `code` and the exit code the CLI ends with. */
export class CliExitError extends Error {
  readonly code: string;
  readonly exitCode: number;
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, exitCode: number, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CliExitError";
    this.code = code;
    this.exitCode = exitCode;
    this.details = details;
  }
}

/** The code, message and exit code of anything thrown (unknown errors are internal: 70). */
export function describeFailure(error: unknown): { code: string; message: string; exitCode: number; details?: Record<string, unknown> } {
  if (error instanceof CliExitError) return { code: error.code, message: error.message, exitCode: error.exitCode, details: error.details };
  if (error instanceof WpCodeboxError) {
    return { code: error.code, message: error.message, exitCode: exitCodeForCategory(error.category), details: error.details };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: "internal-error", message, exitCode: EXIT_CODES.internal };
}
