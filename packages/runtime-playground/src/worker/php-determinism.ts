/**
 * Runs inside the PHP worker thread, before PHP loads: substitutes the virtual clock and seeded
 * entropy where php-wasm's Emscripten glue asks the host for them, so every PHP and WordPress
 * function built on them follows (time(), microtime(), hrtime(), DateTime, random_bytes(),
 * random_int(), mt_rand() seeding, uniqid(), /dev/urandom, …).
 *
 * Where the glue asks (checked in @php-wasm/node 3.1.56, php_8_x.js, asyncify and JSPI builds):
 * - time: the WebAssembly imports `clock_time_get` (WASI; libc's clock_gettime, gettimeofday,
 *   time), `emscripten_date_now` and `emscripten_get_now`. They are replaced in the import object
 *   handed to `WebAssembly.instantiate`, which the glue then binds; side modules (extensions)
 *   resolve symbols through the same object.
 * - entropy: `randomFill`, behind the `random_get` import (getentropy/getrandom) and the
 *   `/dev/random` and `/dev/urandom` devices, calls `crypto.getRandomValues`; the worker's global
 *   is replaced by a seeded generator.
 * File timestamps of the in-memory filesystem still come from the host's `Date.now()` (they are
 * the glue's own bookkeeping, not a question PHP asks).
 *
 * The glue's `/dev/random` and `/dev/urandom` read through a 1 KiB buffer that outlives a request:
 * what one request left in it would reach the next, so a request's bytes would depend on the
 * worker's history (a pooled worker handed to a new session would not repeat a fresh one's
 * values). `replaceRandomDevices()` puts devices in their place whose buffer every mark empties.
 */
import { createHash } from "node:crypto";

/** Virtual clock and entropy settings of one worker (host-computed; plain data). */
export interface WorkerDeterminism {
  /** Virtual clock origin T0 in µs since the epoch; absent: host time. */
  clockOriginUs?: number;
  /** Seed of the entropy stream; absent: host entropy. */
  seed?: number;
  /** µs the clock advances per read. */
  readStepUs: number;
}

/** Where PHP work starts: the clock instant (µs) and the key of the entropy stream. */
export interface WorkMark {
  clockUs: number;
  entropyKey: number;
}

let settings: WorkerDeterminism | undefined;
/** Current virtual time in µs since the epoch. */
let cursorUs = 0;
let entropyKey = 0;
let entropyCounter = 0;
let pool = new Uint8Array(0);
let poolOffset = 0;
/** Buffer of the replaced random devices (emptied by every mark). */
const deviceBuffer = new Uint8Array(1024);
let deviceLeft = 0;
/** Set between Asyncify's unwinding call into emscripten_sleep and its rewinding call. */
let sleepRewinding = false;

function readClockUs(): number {
  const now = cursorUs;
  cursorUs += settings!.readStepUs;
  return now;
}

/** Seeded byte stream of the current work item: SHA-256(seed ":" key ":" counter) blocks. */
function fillSeeded(view: ArrayBufferView): void {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  let written = 0;
  while (written < bytes.length) {
    if (poolOffset >= pool.length) {
      pool = new Uint8Array(createHash("sha256").update(`wp-codebox-entropy:${settings!.seed}:${entropyKey}:${entropyCounter++}`).digest());
      poolOffset = 0;
    }
    const n = Math.min(pool.length - poolOffset, bytes.length - written);
    bytes.set(pool.subarray(poolOffset, poolOffset + n), written);
    poolOffset += n;
    written += n;
  }
}

/** Replaces the time imports in place (the glue binds the object it passed to instantiate). */
function patchTimeImports(env: Record<string, unknown>, memory: { current?: WebAssembly.Memory }): void {
  const origin = settings!.clockOriginUs!;
  env.emscripten_date_now = () => readClockUs() / 1000;
  env.emscripten_get_now = () => (readClockUs() - origin) / 1000;
  env.clock_time_get = (clockId: number, _precision: bigint, ptime: number) => {
    if (clockId < 0 || clockId > 3) return 28; // EINVAL, as the glue does
    const us = readClockUs();
    // Realtime (0): µs since the epoch; the others are monotonic: µs since the clock's origin.
    const ns = BigInt(clockId === 0 ? us : us - origin) * 1000n;
    new DataView(memory.current!.buffer).setBigInt64(ptime, ns, true);
    return 0;
  };
  // sleep()/usleep() reach the host as emscripten_sleep(ms): the wait still happens, and the
  // virtual clock moves by the time slept. (Under JSPI the import is a WebAssembly.Suspending
  // wrapper that must stay as it is; there, sleeping does not move the virtual clock.)
  // Asyncify calls the import twice per sleep: once to unwind the stack and start the timer, and
  // again with the same ms when it rewinds after the timer fired. Only the first call counts.
  const sleep = env.emscripten_sleep as ((ms: number) => unknown) | undefined;
  const Suspending = (WebAssembly as unknown as { Suspending?: new (...args: never[]) => unknown }).Suspending;
  if (typeof sleep === "function" && !(Suspending && sleep instanceof Suspending)) {
    const sleepWithClock = (ms: number) => {
      if (sleepRewinding) sleepRewinding = false;
      else {
        cursorUs += Math.max(0, Math.round(ms * 1000));
        sleepRewinding = true;
      }
      return sleep(ms);
    };
    env.emscripten_sleep = Object.assign(sleepWithClock, sleep);
  }
}

/**
 * Installs the substitutions; call once, before `loadNodeRuntime`. With neither a clock origin
 * nor a seed it does nothing (host time and entropy, as without it).
 */
export function installDeterminism(options: WorkerDeterminism | undefined, start?: WorkMark): void {
  if (!options || (options.clockOriginUs === undefined && options.seed === undefined)) return;
  settings = options;
  if (start) markWork(start);
  if (options.seed !== undefined) {
    const seeded = <T extends ArrayBufferView | null>(view: T): T => {
      if (view) fillSeeded(view);
      return view;
    };
    Object.defineProperty(globalThis.crypto, "getRandomValues", { value: seeded, configurable: true, writable: true });
  }
  if (options.clockOriginUs !== undefined) {
    const instantiate = WebAssembly.instantiate.bind(WebAssembly) as (source: unknown, imports?: WebAssembly.Imports) => Promise<unknown>;
    (WebAssembly as { instantiate: unknown }).instantiate = async (source: unknown, imports?: WebAssembly.Imports) => {
      const env = imports?.env as Record<string, unknown> | undefined;
      // Only the main module's own import object (side modules get a proxy without own keys).
      const memory: { current?: WebAssembly.Memory } = {};
      const patched = !!env && Object.prototype.hasOwnProperty.call(env, "clock_time_get");
      if (patched) patchTimeImports(env!, memory);
      const result = (await instantiate(source, imports)) as { instance?: WebAssembly.Instance; exports?: WebAssembly.Exports };
      if (patched) {
        const exports = result.instance?.exports ?? result.exports;
        memory.current = (exports?.memory as WebAssembly.Memory | undefined) ?? (env!.memory as WebAssembly.Memory | undefined);
      }
      return result;
    };
  }
}

/** Sets the clock and the entropy stream for the next piece of PHP work (no-op when not installed). */
export function markWork(mark: WorkMark | undefined): void {
  if (!settings || !mark) return;
  if (settings.clockOriginUs !== undefined) cursorUs = mark.clockUs;
  // Work that ended inside a sleep (a timeout, a crash) never rewound it.
  sleepRewinding = false;
  entropyKey = mark.entropyKey;
  entropyCounter = 0;
  pool = new Uint8Array(0);
  poolOffset = 0;
  deviceLeft = 0;
}

/** The part of Emscripten's `FS` object `replaceRandomDevices` uses. */
interface DeviceFs {
  unlink(path: string): void;
  createDevice(parent: string, name: string, input: () => number): unknown;
}

/**
 * With seeded entropy, replaces the glue's `/dev/random` and `/dev/urandom` by devices whose
 * buffer every `markWork` empties (see the module comment). Call once PHP has booted, before
 * anything opens them for a request. Does nothing with host entropy.
 */
export function replaceRandomDevices(fs: DeviceFs): void {
  if (settings?.seed === undefined) return;
  const byte = () => {
    if (deviceLeft === 0) {
      fillSeeded(deviceBuffer);
      deviceLeft = deviceBuffer.byteLength;
    }
    return deviceBuffer[--deviceLeft]!;
  };
  for (const name of ["random", "urandom"]) {
    fs.unlink(`/dev/${name}`);
    fs.createDevice("/dev", name, byte);
  }
}

/** The virtual clock now (µs since the epoch), for reporting back to the host; undefined with host time. */
export function virtualClockUs(): number | undefined {
  return settings?.clockOriginUs !== undefined ? cursorUs : undefined;
}
