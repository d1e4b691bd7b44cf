/**
 * One flat module of error conditions. Every user-facing failure carries a stable kebab-case
 * `code`, a message that says what to fix, and JSON-safe `data`. `ERROR_CODES` is the one
 * registry of codes: thrown errors, CLI exits and command results all use a code from it, and
 * `docs/reference/errors.md` is generated from it (with `ERROR_CODE_HELP`).
 */

/** Which CLI exit code a failure maps to: 1 sandbox work failed, 2 invalid input, 3 environment. */
export type ErrorCategory = "sandbox" | "input" | "environment" | "internal";

/** Every stable error code, with the category that decides the CLI exit code. */
export const ERROR_CODES = {
  "invalid-argument": "input",
  "invalid-duration": "input",
  "invalid-policy": "input",
  "invalid-json-arg": "input",
  "invalid-steps-json": "input",
  "invalid-recipe": "input",
  "unknown-command": "input",
  "missing-argument": "input",
  "artifacts-dir-not-empty": "input",
  "artifacts-dir-invalid": "input",
  "artifacts-dir-outside-base": "input",
  /** The bundle folder cannot be created or written, or its disk is (nearly) full; checked before boot. */
  "artifacts-dir-unwritable": "environment",
  /** A disk wp-codebox writes to outside the bundle folder (the cache, a scratch folder) is full. */
  "host-disk-full": "environment",
  /** The cache folder or the sandboxes' scratch folder is not a folder wp-codebox can write in; checked before boot. */
  "host-dir-unusable": "environment",
  "mount-source-missing": "input",
  "mount-escape": "input",
  "mount-target-outside-sandbox": "input",
  "mount-symlink-escape": "input",
  "invalid-mount": "input",
  /** A FIFO, socket or device inside (or as) a mount source. */
  "mount-special-file": "input",
  /** A user-named input file that is not a regular file, is missing or cannot be read. */
  "input-file-invalid": "input",
  /** A user-named input file over its kind's size cap (`INPUT_FILE_CAPS`). */
  "input-file-too-large": "input",
  "wordpress-version-unavailable": "environment",
  "wordpress-build-missing": "environment",
  /** `--backend native` without the Debian packages it runs (PHP, MariaDB, bubblewrap): names them. */
  "native-backend-unavailable": "environment",
  /** An option the native backend does not support yet (`--clock`, `--seed`), refused before boot. */
  "native-unsupported": "input",
  /** A catalog command, observation or CLI command the chosen backend cannot run, refused before boot (names the backend). */
  "backend-unsupported": "input",
  "wordpress-source-invalid": "input",
  "php-version-unavailable": "input",
  "php-extension-unavailable": "input",
  "browser-unavailable": "environment",
  "browser-step-failed": "sandbox",
  "assertion-failed": "sandbox",
  /** A screenshot step's `compare` baseline does not exist (`--update-baselines` writes it). */
  "baseline-missing": "sandbox",
  "wp-cli-unavailable": "environment",
  /** A WP-CLI command that cannot run under PHP-wasm (it runs mysql, mysqldump or another process). */
  "wp-cli-unsupported": "input",
  /** `wp-cli install`: the release location could not be reached or has no such phar or checksum. */
  "wp-cli-download-failed": "environment",
  /** `wp-cli install`: the phar does not match its published SHA-512 (nothing is kept). */
  "wp-cli-checksum-mismatch": "environment",
  "phpunit-unavailable": "environment",
  "phpunit-failed": "sandbox",
  "tests-failed": "sandbox",
  "wordpress-download-failed": "environment",
  "wordpress-checksum-mismatch": "environment",
  "policy-denied": "sandbox",
  "runtime-disposed": "sandbox",
  "boot-failed": "sandbox",
  "php-fatal": "sandbox",
  "php-error": "sandbox",
  "timeout": "sandbox",
  "http-error": "sandbox",
  "check-failed": "sandbox",
  "bundle-invalid": "sandbox",
  "invalid-artifact-path": "internal",
  /** A single artifact read named no file of the runtime (or an unsafe path). */
  "artifact-not-found": "input",
  /** A single artifact read hit its byte limit; the file is still in the bundle. */
  "artifact-too-large": "input",
  "internal-error": "internal",
  "invalid-episode-action": "input",
  "episode-not-started": "input",
  "episode-closed": "input",
  "observation-unsupported": "environment",
  "snapshot-unsupported": "environment",
  "snapshot-not-found": "input",
  "invalid-state-request": "input",
  "state-export-failed": "sandbox",
  "invalid-snapshot": "input",
  "snapshot-tampered": "input",
  "snapshot-redacted": "input",
  "snapshot-incompatible": "input",
  "invalid-episode-script": "input",
  "invalid-episode-bundle": "input",
  "replay-mismatch": "sandbox",
  "attach-unauthorized": "input",
  "attach-unreachable": "environment",
  /** The control server closed the connection during a call, before answering (serve stopped). */
  "attach-connection-lost": "environment",
  "attach-session-not-found": "input",
  "attach-not-found": "input",
  "attach-protocol-error": "environment",
  "pool-exhausted": "environment",
  /** A run stopped by SIGINT/SIGTERM; its exit code is 130/143 (see `exitCodeForError`). */
  "interrupted": "sandbox",
  "invalid-clock": "input",
  "invalid-seed": "input",
  "seed-with-network": "input",
  /** A secret value too short, or spelled by the bundle itself, to be redacted without harm. */
  "secret-unsafe": "input",
  "invalid-batch": "input",
  "sandbox-crashed": "sandbox",
  "expectation-failed": "sandbox",
  "episode-step-failed": "sandbox",
  "queue-unreachable": "environment",
  /** A recipe, episode script or task file names a host path outside its folder and the --allow-path grants. */
  "path-not-allowed": "input",
  /** A recipe's or episode script's policy asks for outbound network the --allow-network grants do not give. */
  "network-not-allowed": "input",
  /** A plugin or theme whose `Requires at least` / `Requires PHP` the sandbox does not meet. */
  "plugin-requirements": "input",
  /** A `--define` / `runtime.defines` entry with a bad or reserved name, or a value that is not a JSON scalar. */
  "invalid-define": "input",
  /** `wordpress.ability` on a WordPress without the Abilities API (before 6.9): the fix is `--wp 6.9` or newer. */
  "abilities-unavailable": "input",
  /** `wordpress.ability` named an ability the site has not registered (the message lists the registered ones). */
  "ability-not-found": "input",
  /** The ability returned a WP_Error (bad input, no permission, or its own failure); its code and message are in the result. */
  "ability-failed": "sandbox",
  /** The command line itself is wrong: no command, an unknown flag, a missing operand (commander's errors). */
  "invalid-usage": "input",
  /** `doctor`: a piece the runs need is missing on this machine. */
  "environment-incomplete": "environment",
  /** A batch ran and at least one of its tasks failed. */
  "batch-failed": "sandbox",
  /** PHP code called `exit()` / `die()` with a non-zero status. */
  "php-exit": "sandbox",
  /** WP-CLI ran and exited non-zero. */
  "wp-cli-failed": "sandbox",
  /** A catalog command this backend does not run. */
  "not-implemented": "sandbox",
  /** A serve control endpoint answered before its sandbox finished booting (HTTP 503). */
  "booting": "environment",
} as const satisfies Record<string, ErrorCategory>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** True when `value` is a registered error code (for codes read from the wire or a queue). */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CODES, value);
}

/** How many characters of a user's value an error message quotes. */
export const QUOTED_VALUE_MAX_CHARS = 200;

/**
 * Quotes a user's value for an error message: JSON string syntax (so NUL bytes, newlines and
 * control characters are visible), cut to `max` characters of the value with the count of the
 * rest, so a 16 MiB argument never becomes a 16 MiB message.
 * @param value - any value; non-strings are shown through `String()`.
 * @param max - characters of the value kept; default `QUOTED_VALUE_MAX_CHARS` (200).
 * @example quoteValue("a\0b") // "\"a\\u0000b\""
 */
export function quoteValue(value: unknown, max: number = QUOTED_VALUE_MAX_CHARS): string {
  const text = typeof value === "string" ? value : String(value);
  if (text.length <= max) return JSON.stringify(text);
  // Never split a surrogate pair: that would print a lone half as \udXXX.
  const cut = /[\ud800-\udbff]$/.test(text.slice(0, max)) ? text.slice(0, max - 1) : text.slice(0, max);
  return `${JSON.stringify(cut)}… (${text.length - cut.length} more characters)`;
}

/** JSON form written into bundles and printed with `--json`. */
export interface SerializedError {
  code: ErrorCode;
  message: string;
  data?: Record<string, unknown>;
}

/**
 * Base error: `code` is stable, `message` says what to try next, `data` is JSON-safe.
 * @example throw new WpCodeboxError("mount-source-missing", "Mount source ./x does not exist: create it or fix the path.", { source: "./x" })
 */
export class WpCodeboxError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, data: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "WpCodeboxError";
    this.code = code;
    this.data = data;
  }

  /** Which exit-code family the error belongs to. */
  get category(): ErrorCategory {
    return ERROR_CODES[this.code] ?? "internal";
  }

  toJSON(): SerializedError {
    return { code: this.code, message: this.message, data: this.data };
  }
}

/** A command or capability the policy does not grant. `data.capability` names it. */
export class PolicyDeniedError extends WpCodeboxError {
  readonly capability: string;
  constructor(capability: string, message?: string) {
    super(
      "policy-denied",
      message ??
        `The runtime policy does not grant the capability "${capability}". Add it to the policy's "commands" list (for example --policy '{"commands":["${capability}"]}').`,
      { capability },
    );
    this.name = "PolicyDeniedError";
    this.capability = capability;
  }
}

/** Maps an error category to the CLI exit code. */
export function exitCodeForCategory(category: ErrorCategory): number {
  switch (category) {
    case "sandbox":
      return 1;
    case "input":
      return 2;
    case "environment":
      return 3;
    default:
      return 70;
  }
}

/** Names of the errno values Emscripten's file system throws most (its numbering, not Linux's). */
const EMSCRIPTEN_ERRNO_NAMES: Record<number, string> = { 2: "EACCES", 10: "EBUSY", 20: "EEXIST", 28: "EINVAL", 31: "EISDIR", 44: "ENOENT", 54: "ENOTDIR", 55: "ENOTEMPTY", 63: "EPERM", 69: "EROFS" };

/**
 * A readable message for anything thrown: an Error's message, a string as is, an object's
 * `message`, `code` or `errno` (Emscripten's file system throws objects with only an errno), else
 * its JSON (at most 500 characters). Never `[object Object]`, never empty.
 */
export function errorMessage(thrown: unknown): string {
  if (typeof thrown === "string") return thrown || "an empty error message";
  if (thrown === null || thrown === undefined) return `${String(thrown)} was thrown`;
  if (typeof thrown !== "object") return String(thrown);
  const { message, code, errno } = thrown as { message?: unknown; code?: unknown; errno?: unknown };
  if (typeof message === "string" && message.trim()) return message;
  if (message !== null && typeof message === "object") return errorMessage(message);
  const name = (thrown as { constructor?: { name?: string } }).constructor?.name;
  const kind = name && name !== "Object" ? `${name}: ` : "";
  if (typeof code === "string" && code) return `${kind}${code}`;
  if (typeof errno === "number") return `${kind}file system error ${EMSCRIPTEN_ERRNO_NAMES[errno] ?? `errno ${errno}`}`;
  let json: string | undefined;
  try {
    json = JSON.stringify(thrown);
  } catch {
    json = undefined;
  }
  if (json && json !== "{}") return `${kind}${json.length > 500 ? `${json.slice(0, 500)}…` : json}`;
  return `${name ?? "an object"} without a message was thrown`;
}

/** Node's codes for a full disk or an exhausted quota. */
const DISK_FULL = /^(ENOSPC|EDQUOT)\b/;

/**
 * A full disk met outside the checks that expect it (the cache while WordPress is assembled or
 * installed, a scratch folder): an environment problem to fix on the host, not a bug.
 * @param thrown - anything thrown; recognised by its `code` (`ENOSPC`, `EDQUOT`) or a message starting with one.
 * @returns a `host-disk-full` error naming the path when the error has one, or undefined for anything else.
 */
export function diskFullError(thrown: unknown): SerializedError | undefined {
  if (thrown === null || typeof thrown !== "object") return undefined;
  const { code, path } = thrown as { code?: unknown; path?: unknown };
  const message = errorMessage(thrown);
  const which = typeof code === "string" && DISK_FULL.test(code) ? code : DISK_FULL.exec(message)?.[1];
  if (!which) return undefined;
  const where = typeof path === "string" && path ? ` (${path})` : "";
  return {
    code: "host-disk-full",
    message: `A disk wp-codebox writes to is full${where}: ${message}. Free space there, or point WP_CODEBOX_CACHE_DIR (the WordPress and site cache, ~/.cache/wp-codebox by default) and TMPDIR at a filesystem with room.`,
    data: { errno: which, ...(where ? { path } : {}) },
  };
}

/** Turns anything thrown into a `SerializedError` (a full disk becomes `host-disk-full`, other unknown errors `internal-error`). */
export function serializeError(error: unknown): SerializedError {
  if (error instanceof WpCodeboxError) return error.toJSON();
  return diskFullError(error) ?? { code: "internal-error", message: errorMessage(error) };
}

/**
 * Why a signal aborted, in words: its reason when that is a string (`"SIGINT"`), an Error
 * reason's message, else `fallback`.
 */
export function abortReasonText(signal: AbortSignal | undefined, fallback = "aborted"): string {
  const reason: unknown = signal?.reason;
  if (typeof reason === "string" && reason) return reason;
  if (reason instanceof Error && reason.message) return reason.message;
  return fallback;
}
