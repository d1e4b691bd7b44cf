/**
 * Deterministic runs: the `--clock` / `--seed` options of every way to start a sandbox, checked
 * before boot, and the resolved form a backend enforces and the bundle records. The rules of the
 * virtual clock live here as constants so the backend, the docs and the tests share them.
 */
import { Type, type Static } from "@sinclair/typebox";
import { WpCodeboxError, quoteValue } from "./errors.js";
import type { NetworkPolicy } from "./runtime.js";

/** Virtual time added before every piece of PHP work (a command's PHP run, an HTTP request, an internal helper run, a boot): 1 s, in microseconds. */
export const VIRTUAL_CLOCK_STEP_US = 1_000_000;
/** Virtual time added by every read of the clock inside PHP (so loops that wait on time progress): 1 µs. */
export const VIRTUAL_CLOCK_READ_US = 1;

/** Largest accepted seed: 2^53 − 1 (exact in JSON and JavaScript). */
export const MAX_SEED = Number.MAX_SAFE_INTEGER;

/**
 * Which origin the site uses:
 * - `stable`: {@link STABLE_SITE_ORIGIN}, the same on every run, mapped to the sandbox's loopback
 *   server for PHP, HTTP commands and the browser; not openable from another program.
 * - `loopback`: `http://127.0.0.1:<free port>`, a URL any browser on this machine can open.
 */
export type SiteOriginMode = "stable" | "loopback";

/** The stable origin of a sandbox (`.test` is reserved: it never resolves on the internet). */
export const STABLE_SITE_ORIGIN = "http://wp-codebox.test" as const;

/** The determinism part of a create spec, as callers write it. */
export interface DeterminismOptions {
  /** `"real"` (host time) or an ISO-8601 instant with a timezone (`2025-01-01T00:00:00Z`) where the virtual clock starts. */
  clock?: string;
  /** Non-negative integer seeding every source of randomness (PHP and browser pages). */
  seed?: number | string;
  /** Default: `stable` with a virtual clock or a seed, else `loopback`. */
  origin?: SiteOriginMode;
}

/** Resolved determinism, recorded in `RuntimeInfo`, `metadata.json` and the episode trace. */
export const RUNTIME_DETERMINISM_SCHEMA = Type.Object(
  {
    clock: Type.Union([Type.Literal("real"), Type.Literal("virtual")]),
    /** Virtual clock start instant (ISO-8601, UTC, milliseconds). */
    start: Type.Optional(Type.String()),
    /** Seed of every source of randomness; absent: host entropy. */
    seed: Type.Optional(Type.Integer({ minimum: 0 })),
    origin: Type.Union([Type.Literal("stable"), Type.Literal("loopback")]),
  },
  { additionalProperties: false },
);
export type RuntimeDeterminism = Static<typeof RUNTIME_DETERMINISM_SCHEMA>;

/** Where an episode's virtual clock starts unless the script or `--clock` says otherwise. */
export const EPISODE_DEFAULT_CLOCK = "2025-01-01T00:00:00.000Z" as const;
/** An episode's seed unless the script or `--seed` says otherwise (none when the policy allows outbound network). */
export const EPISODE_DEFAULT_SEED = 0;

/**
 * The determinism options of an episode: deterministic by default, because replay compares bytes.
 * An explicit `"real"` clock keeps host time; a policy that allows outbound network gets no default
 * seed (an explicit one is refused by `resolveDeterminism`).
 */
export function episodeDeterminismOptions(options: DeterminismOptions, network: NetworkPolicy | undefined): DeterminismOptions {
  return {
    ...options,
    clock: options.clock ?? EPISODE_DEFAULT_CLOCK,
    ...(options.seed === undefined && !networkAllowsOutbound(network) ? { seed: EPISODE_DEFAULT_SEED } : {}),
  };
}

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2}))$/;

/** The last instant a virtual clock may reach: the end of year 9999 (ISO-8601's four-digit years). */
export const CLOCK_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59);

/**
 * How far a virtual clock may advance during one sandbox's life, in ms (one year): it moves at
 * least 1 s per piece of PHP work, so a start later than `CLOCK_MAX_MS` minus this is refused.
 */
export const CLOCK_RUN_ALLOWANCE_MS = 366 * 24 * 3600 * 1000;

/** The latest `--clock` start accepted, as UTC ISO text. */
export const CLOCK_LATEST_START = new Date(CLOCK_MAX_MS - CLOCK_RUN_ALLOWANCE_MS).toISOString().replace(".000Z", "Z");

/** True when the instant's written fields name a real calendar date and time (no 30 February, no hour 24). */
function fieldsExist(match: RegExpExecArray): boolean {
  const [year, month, day, hour, minute, second, offsetHour, offsetMinute] = [1, 2, 3, 4, 5, 6, 9, 10].map((i) => Number(match[i] ?? 0));
  if (hour! > 23 || minute! > 59 || second! > 59 || offsetHour! > 23 || offsetMinute! > 59) return false;
  const date = new Date(Date.UTC(2000, 0, 1));
  date.setUTCFullYear(year!, month! - 1, day!);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month! - 1 && date.getUTCDate() === day;
}

/**
 * Parses `--clock`: `"real"` or an ISO-8601 instant with a timezone (`Z` or `±hh:mm`) that exists
 * on the calendar, from 1970-01-01T00:00:00Z to `CLOCK_LATEST_START` (a year before the end of
 * 9999, so the clock cannot run past it during the run).
 * @returns `{ clock: "real" }` or `{ clock: "virtual", start }` with `start` normalised to UTC ISO.
 * @throws WpCodeboxError `invalid-clock` (`data.clock`, and `data.reason`).
 */
export function parseClockOption(value: string): { clock: "real" } | { clock: "virtual"; start: string } {
  if (value === "real") return { clock: "real" };
  const match = ISO_INSTANT.exec(value);
  const refuse = (reason: string) =>
    new WpCodeboxError(
      "invalid-clock",
      `--clock ${quoteValue(value)} is not valid: ${reason}. Give "real" or an ISO-8601 instant with a timezone from 1970-01-01T00:00:00Z to ${CLOCK_LATEST_START}, e.g. --clock 2025-01-01T00:00:00Z.`,
      { clock: value, reason },
    );
  if (!match) throw refuse("it is not an instant written as YYYY-MM-DDThh:mm[:ss[.fff]] with Z or ±hh:mm");
  if (!fieldsExist(match)) throw refuse("that date or time does not exist on the calendar");
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw refuse("that date or time does not exist on the calendar");
  if (ms < 0) throw refuse("it is before 1970");
  if (ms > CLOCK_MAX_MS - CLOCK_RUN_ALLOWANCE_MS) throw refuse(`it is later than ${CLOCK_LATEST_START}, and the clock advances during the run, so it could pass the end of year 9999`);
  return { clock: "virtual", start: new Date(ms).toISOString() };
}

/**
 * Parses `--seed`: a non-negative integer up to 2^53 − 1 (number or decimal text).
 * @throws WpCodeboxError `invalid-seed`.
 */
export function parseSeedOption(value: number | string): number {
  const n = typeof value === "number" ? value : /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new WpCodeboxError("invalid-seed", `--seed ${JSON.stringify(String(value))} is not valid: give a whole number from 0 to ${MAX_SEED}, e.g. --seed 42.`, { seed: String(value) });
  }
  return n;
}

/** True when the network rule lets PHP or pages reach any host outside the sandbox. */
export function networkAllowsOutbound(network: NetworkPolicy | undefined): boolean {
  if (network === undefined || network === "deny") return false;
  if (network === "allow") return true;
  return network.allowHosts.length > 0;
}

/**
 * Resolves and checks the determinism options before anything boots.
 * @param options what the caller wrote (`clock` default `"real"`, `seed` default none).
 * @param network the normalised policy's network rule.
 * @returns the recorded form (`{ clock, start?, seed?, origin }`).
 * @throws WpCodeboxError `invalid-clock`, `invalid-seed`, `invalid-argument` (unknown origin),
 *   `seed-with-network` (a seed with a policy that allows outbound network: a seeded sandbox
 *   has predictable nonces and passwords, so it must not talk to the outside).
 */
export function resolveDeterminism(options: DeterminismOptions, network: NetworkPolicy | undefined): RuntimeDeterminism {
  const clock = parseClockOption(options.clock ?? "real");
  const seed = options.seed === undefined ? undefined : parseSeedOption(options.seed);
  if (options.origin !== undefined && options.origin !== "stable" && options.origin !== "loopback") {
    throw new WpCodeboxError("invalid-argument", `origin ${JSON.stringify(options.origin)} is not valid: use "stable" or "loopback".`, { origin: options.origin });
  }
  if (seed !== undefined && networkAllowsOutbound(network)) {
    throw new WpCodeboxError(
      "seed-with-network",
      `--seed makes nonces, passwords and session tokens predictable, so it cannot be combined with a policy that allows outbound network (${JSON.stringify(network)}). Use the network rule "deny", or drop --seed.`,
      { seed, network },
    );
  }
  const deterministic = clock.clock === "virtual" || seed !== undefined;
  return {
    ...clock,
    ...(seed !== undefined ? { seed } : {}),
    origin: options.origin ?? (deterministic ? "stable" : "loopback"),
  };
}
