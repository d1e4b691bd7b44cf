/**
 * How many sandboxes this machine can run at once without swapping.
 */
import { availableParallelism, freemem } from "node:os";

/**
 * Peak resident memory budgeted per sandbox slot (a child process running a recipe or episode
 * with one PHP worker). `npm run bench:batch` measured about 330 MiB for a run-php recipe; the
 * budget leaves room for plugins, browser-free episodes and snapshots.
 */
export const SANDBOX_MEMORY_BUDGET_BYTES = 512 * 1024 * 1024;
/** Memory left to the rest of the machine. */
export const MEMORY_HEADROOM_BYTES = 1024 * 1024 * 1024;

/** The numbers behind a concurrency decision. */
export interface ConcurrencyDecision {
  concurrency: number;
  cores: number;
  availableBytes: number;
  /** Most slots the available memory holds. */
  memoryCap: number;
  /** Set when a requested concurrency was lowered. */
  lowered?: { requested: number; reason: string };
}

/**
 * The default is one sandbox per core; both the default and a requested value are capped by
 * available memory (`MemAvailable` less 1 GiB, 512 MiB per sandbox), so the machine never swaps.
 */
export function decideConcurrency(requested?: number, probe: { cores?: number; availableBytes?: number } = {}): ConcurrencyDecision {
  const cores = probe.cores ?? availableParallelism();
  const availableBytes = probe.availableBytes ?? freemem();
  const memoryCap = Math.max(1, Math.floor((availableBytes - MEMORY_HEADROOM_BYTES) / SANDBOX_MEMORY_BUDGET_BYTES));
  const wanted = requested ?? cores;
  const concurrency = Math.max(1, Math.min(wanted, memoryCap));
  return {
    concurrency,
    cores,
    availableBytes,
    memoryCap,
    ...(requested !== undefined && concurrency < requested
      ? { lowered: { requested, reason: `${Math.round(availableBytes / 2 ** 20)} MiB available holds ${memoryCap} sandbox(es) of ${SANDBOX_MEMORY_BUDGET_BYTES / 2 ** 20} MiB after ${MEMORY_HEADROOM_BYTES / 2 ** 20} MiB headroom` } }
      : {}),
  };
}
