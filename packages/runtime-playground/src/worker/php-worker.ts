/**
 * Worker-thread entry: owns one PHP (WebAssembly) instance with WordPress booted.
 * The runtime terminates this thread to enforce a timeout (PHP's own limits, such as
 * `max_execution_time`, do not fire under php-wasm), then starts a fresh one on the same host files.
 */
import { parentPort, workerData } from "node:worker_threads";
import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { setFlagsFromString } from "node:v8";
import { loadNodeRuntime, createNodeFsMountHandler, getPHPLoaderModule } from "@php-wasm/node";
import { logger as phpWasmLogger, type LogHandler } from "@php-wasm/logger";
import { __private__dont__use, consumeAPISync, type FileLockManager, type PHP, type PHPRequestHandler } from "@php-wasm/universal";
import { bootWordPressAndRequestHandler } from "@wp-playground/wordpress";
import { createConfinedNodeFsMountHandler } from "../fs/confined-node-fs.js";
import { createReadOnlyNodeFsMountHandler } from "../fs/read-only-node-fs.js";
import { bootFailureMessage, engineCrashFatal, fatalFromOutput } from "./php-fatal.js";
import { createCopyOnWriteMountHandler } from "../fs/copy-on-write-fs.js";
import { packSeedFiles, unpackSeed, type SeedFile } from "../site/opcache-seed.js";
import { nativeStackMbFor, type AwaitOptionsData } from "./php-worker-thread.js";
import type { CappedStream, CorePrecompile, DeferredRequest, PhpFatal, RequestReport, SiteReadyOptions, WorkerBootOptions, WorkerMount, WorkerRequest, WorkerResponse, WorkerEvent } from "./php-worker-protocol.js";
import { phpNetworkGuardPreRun } from "./php-network-guard.js";
import { installDeterminism, markWork, replaceRandomDevices, virtualClockUs } from "./php-determinism.js";
import { DEFERRED_REQUESTS_DIR, PRIME_SQLITE_GRAMMAR_PHP, opcacheCompilePhp, selfCallMuPlugin, sqliteGrammarPreload, themePatternsMuPlugin, debugDisplayMuPlugin } from "../php-source/site-php.js";
import { errorMessage } from "@wp-codebox/runtime-core";
import { cutAtCharacter } from "./utf8-cut.js";
import { MemoryFsBootState, type EmscriptenFs, type MemoryFsRestore } from "../fs/memory-fs-boot-state.js";

// Baseline-compile PHP's WebAssembly only (Liftoff): TurboFan tier-up spent ~0.8 s of CPU on the
// first WordPress load, on two cores competing with the run itself, and steady-state requests
// measured no faster with it. Process-wide; WP_CODEBOX_WASM_TIERUP=1 restores V8's default.
if (process.env.WP_CODEBOX_WASM_TIERUP !== "1") setFlagsFromString("--liftoff-only");

/**
 * PHP's main WebAssembly module for `phpVersion`, compiled (the same file php-wasm would load),
 * or undefined when it cannot be found or compiled (php-wasm then loads it itself). Liftoff
 * compiles php-wasm's 23 MB module in ~130-290 ms on a 2-core machine; started before the boot
 * options arrive, that happens while the process that prestarted this thread still prepares the
 * site (unpacking, installing), instead of in the boot.
 */
async function compilePhpWasm(phpVersion: string): Promise<WebAssembly.Module | undefined> {
  try {
    const loader = (await getPHPLoaderModule(phpVersion as "8.3")) as { dependencyFilename?: unknown };
    if (typeof loader.dependencyFilename !== "string") return undefined;
    return await WebAssembly.compile((await readFile(loader.dependencyFilename)) as Uint8Array<ArrayBuffer>);
  } catch {
    return undefined;
  }
}

// A prestarted worker (php-worker-thread.ts) has imported everything above by now and gets its
// options as its first message; requests come only after it posts `ready`. It compiles PHP's
// WebAssembly meanwhile.
const prestart = workerData as Partial<AwaitOptionsData> | undefined;
/** Boot steps as they end, [step, epoch ms] (`bootMarks` of the ready event, for benches). */
const bootMarks: [string, number][] = [["thread loaded", Date.now()]];
const compiling = prestart?.awaitOptions && prestart.phpVersion ? { phpVersion: prestart.phpVersion, module: compilePhpWasm(prestart.phpVersion) } : undefined;
const options: WorkerBootOptions = prestart?.awaitOptions ? await new Promise<WorkerBootOptions>((resolve) => parentPort!.once("message", resolve)) : (workerData as WorkerBootOptions);
/** The compiled module when it is the one this worker's PHP version needs. */
bootMarks.push(["options received", Date.now()]);
const precompiledPhpWasm = compiling?.phpVersion === options.phpVersion ? await compiling.module : undefined;
bootMarks.push(["PHP WebAssembly compiled", Date.now()]);

/**
 * Emscripten's hook that instantiates the main module itself: from the module compiled while the
 * thread waited for its options. The glue passes the imports and takes the instance back.
 */
function instantiatePrecompiled(module: WebAssembly.Module) {
  return (imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void): Record<string, never> => {
    WebAssembly.instantiate(module, imports).then(
      (instance) => receive(instance, module),
      (error: unknown) => post({ event: "boot-failed", error: { message: `PHP's WebAssembly could not be instantiated: ${errorMessage(error)}` } }),
    );
    return {};
  };
}
// Before PHP loads: the glue binds the time and entropy sources when it instantiates.
installDeterminism(options.determinism, options.bootMark);
const port = parentPort!;

// php-wasm logs its own diagnostics (an abort's reason, for one) to the console, which in a worker
// is the process's stderr: a line in the middle of `serve --json`'s JSON events, or of an MCP
// server's output. They go to the runtime's progress instead. (The logger keeps its handlers in a
// private field; when that changes, php-wasm's own console output stays as it was.)
const phpWasmLogHandlers = (phpWasmLogger as unknown as { handlers?: LogHandler[] }).handlers;
if (Array.isArray(phpWasmLogHandlers)) {
  phpWasmLogHandlers.splice(0, phpWasmLogHandlers.length, (log) => post({ event: "engine-message", text: typeof log.message === "string" ? log.message : errorMessage(log.message) }));
}
const LAST_ERROR_PATH = "/internal/wp-codebox/last-error.json";
/** Written at shutdown of every script and HTTP request by assets/runtime/request-report.php. */
const REPORT_PATH = "/internal/wp-codebox/request-report.json";
const REPORT_PRELOAD = "/internal/shared/preload/0-wp-codebox-request-report.php";
const REPORT_SOURCE = readFileSync(new URL("../../assets/runtime/request-report.php", import.meta.url));

/** PHP's error log of HTTP requests (set by the preload; a script's errors go to its stderr). */
const HTTP_ERROR_LOG = "/internal/wp-codebox/http-error.log";

/** Clears the request report (and the HTTP error log) before a run or HTTP request. */
function clearReport(): void {
  if (php.fileExists(REPORT_PATH)) php.unlink(REPORT_PATH);
  if (php.fileExists(HTTP_ERROR_LOG)) php.unlink(HTTP_ERROR_LOG);
}

/** The fatal error in the HTTP error log, if any (then deletes the log). */
function takeLoggedFatal(): PhpFatal | undefined {
  if (!php.fileExists(HTTP_ERROR_LOG)) return undefined;
  const log = php.readFileAsText(HTTP_ERROR_LOG);
  php.unlink(HTTP_ERROR_LOG);
  return fatalFromOutput(log);
}

/** Reads and removes what the last script or HTTP request reported (fatal error, database errors). */
function takeReport(): RequestReport {
  if (!php.fileExists(REPORT_PATH)) return {};
  try {
    return JSON.parse(php.readFileAsText(REPORT_PATH)) as RequestReport;
  } catch {
    return {};
  } finally {
    php.unlink(REPORT_PATH);
  }
}

function post(message: WorkerResponse | WorkerEvent, transfer?: ArrayBuffer[]): void {
  port.postMessage(message, transfer);
}

/** The buffers an answer hands over rather than copies: an exported OPcache's pack (~28 MB). */
function transferablesOf(request: WorkerRequest, value: unknown): ArrayBuffer[] | undefined {
  return request.op === "export-opcache" ? [(value as { pack: Uint8Array }).pack.buffer as ArrayBuffer] : undefined;
}

async function mountAll(php: PHP): Promise<void> {
  php.mkdir("/wordpress");
  // Core comes from the shared installed-site cache, which no sandbox may change: the sandbox's
  // writes land in its own copy-on-write layer over it.
  if (options.coreWritable) await php.mount("/wordpress", createNodeFsMountHandler(options.coreDir));
  else if (options.coreLayers) await php.mount("/wordpress", createCopyOnWriteMountHandler({ lower: options.coreDir, ...options.coreLayers }));
  else throw new Error("the worker needs coreLayers (copy-on-write core) or coreWritable");
  if (options.contentDir) await php.mount("/wordpress/wp-content", createNodeFsMountHandler(options.contentDir));
  if (options.workspaceDir) {
    php.mkdir("/workspace");
    // A read-write mount of the whole /workspace replaces the sandbox's own (mounting twice is EBUSY).
    if (!options.mounts.some((m) => m.vfsPath === "/workspace")) await php.mount("/workspace", createNodeFsMountHandler(options.workspaceDir));
  }
  for (const m of options.mounts) await mountOne(php, m);
}

/** Mounts the site (`mountAll`), puts the installer's must-use plugin in place and seeds OPcache from the site's pack. */
async function mountSite(instance: PHP): Promise<void> {
  await mountAll(instance);
  if (options.installerMuPlugin) {
    instance.mkdir(INSTALLER_MU_PLUGIN.slice(0, INSTALLER_MU_PLUGIN.lastIndexOf("/")));
    instance.writeFile(INSTALLER_MU_PLUGIN, options.installerMuPlugin);
  }
  if (options.opcacheSeedPack && existsSync(options.opcacheSeedPack)) seedFromPack(instance, options.opcacheSeedPack, OPCACHE_DIR);
}

/**
 * Compiles the SQLite integration (the scripts under `/internal/shared`) into OPcache and builds
 * its grammar entry while the worker waits for its site (boot option `siteAfterBoot`): the parts
 * of the installed site's OPcache seed that are not core, made by the sandbox that saves it (it
 * asks for both again, `PlaygroundRuntime.saveOpcacheSeed`, and finds them done). Never throws:
 * what is not done here is done then.
 */
async function warmSqliteIntegration(instance: PHP): Promise<void> {
  try {
    await instance.run({ code: PRIME_SQLITE_GRAMMAR_PHP });
    await compileIntoOpcache(instance, { dirs: ["/internal/shared"] });
    sharedCompiled = true;
    bootMarks.push(["SQLite integration compiled, its grammar built", Date.now()]);
  } catch (error) {
    bootMarks.push([`SQLite integration not compiled: ${errorMessage(error).slice(0, 200)}`, Date.now()]);
  }
}

async function mountOne(instance: PHP, m: WorkerMount): Promise<void> {
  // A read-write mount is the user's own folder: no link PHP makes there may lead out of it.
  await instance.mount(m.vfsPath, m.readOnly ? createReadOnlyNodeFsMountHandler(m.hostPath) : createConfinedNodeFsMountHandler(m.hostPath));
}

/**
 * Reads a stream to its end (PHP's), keeping up to `capBytes`. `printed()` is what PHP printed to
 * it in all (the output sink dropped what was past the cap before php-wasm queued it): the
 * reported total.
 */
async function readCapped(stream: ReadableStream<Uint8Array>, capBytes: number, printed?: () => number): Promise<CappedStream> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let bytes = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (kept < capBytes) {
      const copy = value.subarray(0, Math.min(value.byteLength, capBytes - kept)).slice();
      chunks.push(copy);
      kept += copy.byteLength;
    }
  }
  const data = new Uint8Array(kept);
  let offset = 0;
  for (const c of chunks) {
    data.set(c, offset);
    offset += c.byteLength;
  }
  bytes = Math.max(bytes, printed?.() ?? 0);
  // A cap that falls inside a multi-byte character keeps the text before it (`bytes` stays the true total).
  return { data: cutAtCharacter(data, bytes > kept), bytes, truncated: bytes > kept };
}

const OPCACHE_DIR = "/internal/shared/opcache";
/** Where `installerMuPlugin` goes (kept out of OPcache: it must not travel in the installed site's seed). */
const INSTALLER_MU_PLUGIN = "/internal/shared/mu-plugins/0-wp-codebox-installer.php";
/** Where boot option `muPlugin` goes (the sandbox's environment, secrets included: kept out of OPcache). */
const ENV_MU_PLUGIN = "/internal/shared/mu-plugins/0-wp-codebox.php";
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
/** mtime of the PHP files wp-codebox keeps in OPcache's folder (2001-09-09, old enough for OPcache to cache them at once). */
const SEEDED_ENTRY_MTIME_MS = 1_000_000_000_000;
/** PHP versions whose php-wasm build has no OPcache shared memory. */
const FILE_CACHE_ONLY_PHP = new Set(["7.4", "8.0"]);
/**
 * How deep PHP's C stack may grow before PHP stops a recursion with its own error ("Maximum call
 * stack size of … bytes reached. Infinite recursion?"), as on a real PHP 8.3 server, at the line
 * that recursed. Of php-wasm's builds only PHP 8.3's has this check (`ini_get(
 * 'zend.max_allowed_stack_size')` is false in the others, which ignore the setting). PHP cannot
 * find the size of its stack out itself here, so without a limit it never stops. What binds it is
 * the worker's native stack (8 MB for this version, `nativeStackMbFor`), which must last until the check:
 * usort and preg_replace_callback recursion take 4–5.3 native bytes per byte of C stack (measured:
 * with 2M the native stack ran out first), array_map 2.7, so 1M is met by 5.3 MB at most. About
 * 10,000 levels of array_map recursion fit, 850 of serialize() on a nested array (1.2 KB of C
 * stack a level) and json_encode() up to its own depth limit of 512; with 512K, serialize() failed
 * at 391 levels and json_encode() before 512.
 */
const PHP_STACK_LIMIT = "1M";

/**
 * Bytes of WebAssembly memory PHP's C stack gets (`moveCStack`): 8 bytes for each byte of the
 * thread's native stack, so the native stack runs out first for any recursion that takes at
 * least 0.125 native bytes per byte of C stack (the least we measured is 0.27). Not more: on
 * php-wasm's 8.5 build, ending a runaway userland recursion took over two minutes with 64 MiB
 * behind a 4 MB native stack, against about 20 s with 32 MiB.
 */
const LARGE_C_STACK_BYTES = nativeStackMbFor(options.phpVersion) * 8 * (1 << 20);

/**
 * Gives every PHP script under `vfsDir` (except the OPcache folder) an mtime derived from its content.
 * Playground writes the SQLite integration and its mu-plugins into memory at every boot, so their
 * mtimes would be "now" and the seeded OPcache (which validates timestamps) would miss them every
 * time; with content-derived mtimes the same bytes hit the compiled copy, and changed bytes still
 * miss (a different mtime), so stale bytecode can never run.
 */
function stabiliseMtimes(instance: PHP, vfsDir: string): number {
  const fs = (instance as unknown as Record<symbol, { FS: { utime(path: string, atime: number, mtime: number): void } }>)[__private__dont__use]?.FS;
  if (!fs || !instance.isDir(vfsDir)) return 0;
  let n = 0;
  for (const name of instance.listFiles(vfsDir)) {
    const path = `${vfsDir}/${name}`;
    if (path === OPCACHE_DIR) continue;
    if (instance.isDir(path)) n += stabiliseMtimes(instance, path);
    else if (path.endsWith(".php")) {
      // Only scripts: OPcache checks nothing else, and hashing the 30 MB ICU data file of intl cost ~40 ms a boot.
      const digest = createHash("sha256").update(instance.readFileAsBuffer(path)).digest();
      // Seconds in 2001–2017: plausible, never in the future, 2^28 distinct values.
      const seconds = 1_000_000_000 + (digest.readUInt32BE(0) >>> 4);
      fs.utime(path, seconds * 1000, seconds * 1000);
      n++;
    }
  }
  return n;
}

/**
 * Puts the files of a packed OPcache seed (opcache-seed.ts) under `vfsDir` of PHP's in-memory
 * filesystem: one host read, and each file node takes a view of that buffer. Nodes are created
 * from their parent node (MEMFS `mknod`), not by path: path lookups and `FS.writeFile`'s open and
 * close per file made seeding ~80 ms of every worker's boot; this takes ~15 ms.
 */
function seedFromPack(instance: PHP, packPath: string, vfsDir: string): void {
  type MemfsNode = { contents: Uint8Array | null; usedBytes: number; atime?: number; mtime?: number; ctime?: number; node_ops: { mknod(parent: MemfsNode, name: string, mode: number, dev: number): MemfsNode } };
  const fs = (instance as unknown as Record<symbol, { FS: { lookupPath(path: string): { node: MemfsNode }; lookupNode(parent: MemfsNode, name: string): MemfsNode } }>)[__private__dont__use]?.FS;
  const files = unpackSeed(readFileSync(packPath));
  instance.mkdir(vfsDir);
  if (!fs) {
    for (const file of files) {
      const path = `${vfsDir}/${file.path}`;
      instance.mkdir(path.slice(0, path.lastIndexOf("/")));
      instance.writeFile(path, file.data);
    }
    return;
  }
  const dirs = new Map<string, MemfsNode>([["", fs.lookupPath(vfsDir).node]]);
  const dirNode = (rel: string): MemfsNode => {
    let node = dirs.get(rel);
    if (!node) {
      const cut = rel.lastIndexOf("/");
      const parent = dirNode(cut < 0 ? "" : rel.slice(0, cut));
      const name = rel.slice(cut + 1);
      try {
        node = fs.lookupNode(parent, name);
      } catch {
        node = parent.node_ops.mknod(parent, name, S_IFDIR | 0o755, 0);
      }
      dirs.set(rel, node);
    }
    return node;
  };
  for (const file of files) {
    const cut = file.path.lastIndexOf("/");
    const parent = dirNode(cut < 0 ? "" : file.path.slice(0, cut));
    const node = parent.node_ops.mknod(parent, file.path.slice(cut + 1), S_IFREG | 0o644, 0);
    node.contents = file.data;
    node.usedBytes = file.data.byteLength;
    // wp-codebox's own entries there are PHP files whose compiled form is in the seed too, made
    // when they had this mtime (assets/site/sqlite-grammar-preload.php sets it).
    if (file.path.startsWith("wp-codebox/")) node.atime = node.mtime = node.ctime = SEEDED_ENTRY_MTIME_MS;
  }
}

/**
 * The files under `vfsDir` of PHP's in-memory filesystem packed into one buffer
 * (`packSeedFiles`: sorted by name folder by folder, as `packSeed` lists a folder, so the same
 * cache packs to the same bytes), which is its own ArrayBuffer (transferable). Walks MEMFS's nodes
 * and packs views of their contents, one copy in all: reading the ~560 compiled scripts by path
 * and copying each took ~55 ms of a first boot's critical path, a copy per file ~100 ms.
 */
function packOpcacheDir(instance: PHP, vfsDir: string): Uint8Array {
  type MemfsNode = { mode: number; contents: Record<string, MemfsNode> | Uint8Array | number[] | null; usedBytes?: number };
  const fs = (instance as unknown as Record<symbol, { FS?: { lookupPath(path: string): { node: MemfsNode }; isDir(mode: number): boolean; isFile(mode: number): boolean } }>)[__private__dont__use]?.FS;
  const files: SeedFile[] = [];
  const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  let root: MemfsNode | undefined;
  try {
    root = instance.isDir(vfsDir) ? fs?.lookupPath(vfsDir).node : undefined;
  } catch {
    root = undefined;
  }
  if (fs && root?.contents && !ArrayBuffer.isView(root.contents) && !Array.isArray(root.contents)) {
    const walk = (dir: MemfsNode, rel: string): void => {
      const entries = dir.contents as Record<string, MemfsNode>;
      for (const name of Object.keys(entries).sort(byName)) {
        const node = entries[name]!;
        const path = rel ? `${rel}/${name}` : name;
        if (fs.isDir(node.mode)) walk(node, path);
        else if (fs.isFile(node.mode)) {
          const size = node.usedBytes ?? 0;
          // MEMFS holds a file's bytes as an Int8Array (a slice of PHP's heap) or a Uint8Array, sometimes larger than the file.
          const contents = node.contents as ArrayBufferView | number[] | null;
          files.push({ path, data: !contents || !size ? new Uint8Array(0) : ArrayBuffer.isView(contents) ? new Uint8Array(contents.buffer, contents.byteOffset, size) : Uint8Array.from(contents.slice(0, size)) });
        }
      }
    };
    walk(root, "");
  } else if (instance.isDir(vfsDir)) {
    // Another filesystem there than MEMFS: by path.
    const walk = (rel: string): void => {
      for (const name of instance.listFiles(rel ? `${vfsDir}/${rel}` : vfsDir).sort(byName)) {
        const path = rel ? `${rel}/${name}` : name;
        if (instance.isDir(`${vfsDir}/${path}`)) walk(path);
        else files.push({ path, data: instance.readFileAsBuffer(`${vfsDir}/${path}`) });
      }
    };
    walk("");
  }
  const pack = packSeedFiles(files);
  // Transferred whole: copied when it is a slice of Node's shared pool (a small pack).
  return pack.byteOffset === 0 && pack.buffer.byteLength === pack.byteLength ? pack : new Uint8Array(pack);
}

/**
 * Compiles `files` and the `.php` files under `dirs` (paths of PHP's filesystem) into OPcache
 * without running them (assets/site/opcache-compile.php).
 * @returns how many scripts compiled.
 */
async function compileIntoOpcache(instance: PHP, list: { files?: string[]; dirs?: string[] }): Promise<number> {
  instance.mkdir("/internal/wp-codebox");
  instance.writeFile("/internal/wp-codebox/opcache-compile.json", JSON.stringify(list));
  const result = await instance.run({ code: opcacheCompilePhp() });
  instance.unlink("/internal/wp-codebox/opcache-compile.json");
  return Number(result.text) || 0;
}

/**
 * Compiles the release's scripts a WordPress load includes (boot option `precompile`) before the
 * site is mounted: the release folder is mounted read-only at `/wordpress` meanwhile. The site's
 * core links to those files, so OPcache finds them compiled, under the same paths and mtimes,
 * once the site replaces the mount. Never throws: a script that stops the compiling (a fatal
 * error at compile time) leaves the rest to be compiled when first included.
 */
async function precompileCore(instance: PHP, precompile: CorePrecompile): Promise<void> {
  instance.mkdir("/wordpress");
  const unmount = await instance.mount("/wordpress", createReadOnlyNodeFsMountHandler(precompile.treeDir));
  try {
    const compiled = await compileIntoOpcache(instance, { files: precompile.scripts.map((rel) => `/wordpress/${rel}`) });
    bootMarks.push([`core precompiled (${compiled} of ${precompile.scripts.length} scripts)`, Date.now()]);
  } catch (error) {
    // Only time is lost: each script is compiled when WordPress first includes it, as without a list.
    bootMarks.push([`core not precompiled: ${errorMessage(error).slice(0, 200)}`, Date.now()]);
  } finally {
    await unmount();
  }
}

/**
 * The output sink of the PHP work running now (a `run` or an `http` request). PHP hands every
 * chunk it prints to the module's `onStdout`/`onStderr`, and php-wasm copies each one into a
 * stream that is read only once PHP yields: a script that prints 600 MiB in a loop would have
 * 600 MiB queued in this thread. The sink passes on to php-wasm only up to the work's cap per
 * stream and counts (and drops) the rest, so the queue never holds more than the cap, whatever
 * PHP prints. It also mirrors a `run`'s kept output to the runtime synchronously: the worker's
 * event loop is blocked while PHP runs, so a run that never returns (killed at its deadline)
 * would otherwise take everything it printed with it.
 */
interface OutputSink {
  cap: { stdout: number; stderr: number };
  passed: { stdout: number; stderr: number };
  total: { stdout: number; stderr: number };
  /** The `run` request whose kept output is mirrored (`output` events); none for `http`. */
  mirrorId?: number;
}
let sink: OutputSink | undefined;

/**
 * Bytes printed so far by the running `run`, readable by the runtime while PHP blocks this
 * thread: `[request id, stdout bytes, stderr bytes]` (sent once, with the `ready` event).
 */
const printedCounters = new Float64Array(new SharedArrayBuffer(3 * Float64Array.BYTES_PER_ELEMENT));

function installOutputSink(instance: PHP): void {
  const module = (instance as unknown as Record<symbol, Record<string, unknown>>)[__private__dont__use];
  if (!module || module.__wpCodeboxSink) return;
  module.__wpCodeboxSink = true;
  for (const [prop, stream] of [["onStdout", "stdout"], ["onStderr", "stderr"]] as const) {
    let inner = module[prop] as ((chunk: Uint8Array) => void) | undefined;
    Object.defineProperty(module, prop, {
      configurable: true,
      get: () => inner,
      set: (fn: (chunk: Uint8Array) => void) => {
        inner = (raw: Uint8Array) => {
          const s = sink;
          if (!s) return fn(raw);
          s.total[stream] += raw.byteLength;
          const keep = Math.max(0, Math.min(raw.byteLength, s.cap[stream] - s.passed[stream]));
          s.passed[stream] += keep;
          if (keep > 0) fn(keep === raw.byteLength ? raw : raw.subarray(0, keep));
          if (s.mirrorId === undefined) return;
          printedCounters[stream === "stdout" ? 1 : 2] = s.total[stream];
          // PHP hands over a view of its heap (an Int8Array): copy it as plain bytes.
          if (keep > 0) post({ event: "output", id: s.mirrorId, stream, data: new Uint8Array(raw.buffer, raw.byteOffset, keep).slice(), bytes: s.total[stream] });
        };
      },
    });
  }
}

/** Starts capping (and for a `run`, mirroring) the output of the PHP work about to run. */
function startOutputSink(cap: { stdout: number; stderr: number }, mirrorId?: number): OutputSink {
  installOutputSink(php);
  if (mirrorId !== undefined) printedCounters.set([mirrorId, 0, 0]);
  sink = { cap, passed: { stdout: 0, stderr: 0 }, total: { stdout: 0, stderr: 0 }, ...(mirrorId !== undefined ? { mirrorId } : {}) };
  return sink;
}

/** The file a generated wrapper runs (`require '/internal/wp-codebox/code/x.php'`), for error reports. */
function scriptOf(code: string): string {
  const required = /require (?:json_decode\(base64_decode\('([A-Za-z0-9+/=]+)'\), true\)|'([^']+)')/.exec(code);
  if (required?.[1]) {
    try {
      return JSON.parse(Buffer.from(required[1], "base64").toString("utf8")) as string;
    } catch {
      // fall through
    }
  }
  return required?.[2] ?? "(inline PHP)";
}

type FsNode = { parent: FsNode; mounted?: unknown; mount: { mountpoint: string; root: FsNode }; name_next?: FsNode };

/**
 * Drops Emscripten's cached directory entries for files under `vfsPath`, so the next lookup asks
 * the host mount again. Emscripten answers `access()` (PHP's `file_exists`) from that cache alone,
 * so after the host replaced the files (reset, snapshot restore) a deleted file would still
 * "exist". Mount points and their ancestors stay: a mount lives on its cached node.
 * @returns how many entries were dropped.
 */
function forgetCachedNodes(instance: PHP, vfsPath: string): number {
  const FS = ((instance as unknown as Record<symbol, { FS: { nameTable: (FsNode | null)[]; hashRemoveNode(node: FsNode): void } }>)[__private__dont__use])?.FS;
  if (!FS) return 0;
  const nodes: FsNode[] = [];
  for (const bucket of FS.nameTable) for (let node = bucket ?? undefined; node; node = node.name_next) nodes.push(node);
  const keep = new Set<FsNode>();
  for (const node of nodes) {
    if (!node.mounted) continue;
    for (let n = node; !keep.has(n); n = n.parent) {
      keep.add(n);
      if (n.parent === n) break;
    }
  }
  let dropped = 0;
  const prefix = vfsPath.endsWith("/") ? vfsPath : `${vfsPath}/`;
  for (const node of nodes) {
    const mountpoint = node.mount?.mountpoint ?? "";
    if (keep.has(node) || node === node.mount?.root || !(mountpoint === vfsPath || mountpoint.startsWith(prefix))) continue;
    FS.hashRemoveNode(node);
    dropped++;
  }
  return dropped;
}

let handler: PHPRequestHandler;
let php: PHP;

/**
 * Moves PHP's C stack, before PHP first runs (a `postRun` of the runtime: the module is ready),
 * from the 1 MiB php-wasm gives it to `LARGE_C_STACK_BYTES` (32 or 64 MiB) of PHP's heap. The old stack lies just
 * above PHP's globals, so a recursion through PHP's C functions (array_map calling itself, usort,
 * __toString, serialize() or freeing a deeply nested array) ran past it into them, and the engine
 * then trapped somewhere unrelated ("memory access out of bounds", "null function or function
 * signature mismatch") or spun until the deadline. Every level of such recursion also takes native
 * stack for its WebAssembly frames: from 0.27 (serialize) to about 5 (usort) native bytes per byte
 * of C stack in what we measured, so the worker thread's native stack (4 or 8 MB,
 * `nativeStackMbFor`) runs out first even at the lowest of those: a clean "Maximum call stack size exceeded" (a RangeError, after which the worker is
 * replaced), before anything is overwritten. PHP 8.3's own check (`PHP_STACK_LIMIT`) counts from
 * where the stack is when PHP starts, so it works in the new one. Nothing in PHP or the glue keeps
 * the old place: Emscripten's stackSave/stackRestore and its longjmp work from the current value.
 * The pages cost memory only once a recursion reaches them.
 */
function moveCStack(module: { _malloc?: (bytes: number) => number; ___stack_pointer?: WebAssembly.Global }): void {
  const base = module._malloc?.(LARGE_C_STACK_BYTES);
  if (!module.___stack_pointer || !base) return;
  // The stack grows down from its 16-byte aligned top.
  module.___stack_pointer.value = (base + LARGE_C_STACK_BYTES) & ~15;
}
let bootFs: MemoryFsBootState | undefined;
/**
 * Set when PHP's engine died under a request (a WebAssembly trap, e.g. a stack overflow): the
 * instance is no longer sound (its C stack and globals are wherever the trap left them), so this
 * worker answers that request, flagged `engineCrashed`, and nothing after it; the runtime replaces
 * the worker and sends what was queued here to the replacement.
 */
let engineCrashed: string | undefined;

/** PHP that forgets what it keeps between requests of files that were just deleted: compiled scripts (OPcache) and stat/realpath caches. */
const FORGET_DELETED_PHP = `<?php
$files = json_decode(getenv('WP_CODEBOX_DELETED_FILES') ?: '[]', true);
if (function_exists('opcache_invalidate')) foreach ($files as $file) @opcache_invalidate($file, true);
clearstatcache(true);`;

async function restoreBootFs(): Promise<MemoryFsRestore> {
  if (!bootFs) return { restored: false, reason: "the in-memory file system is not reachable in this php-wasm build" };
  const result = bootFs.restore();
  if (result.restored) {
    // The realpath cache always; compiled copies of deleted scripts when there were any.
    const response = await php.run({ code: FORGET_DELETED_PHP, env: { WP_CODEBOX_DELETED_FILES: JSON.stringify(result.deletedPhpFiles) } });
    if (response.exitCode !== 0) return { restored: false, reason: `PHP could not drop its caches: ${response.errors || response.text}` };
  }
  return result;
}
/** Whether this worker compiled core before its site came (`precompile`): it is making the installed site's seed. */
let precompiled = false;
/**
 * Whether `warmSqliteIntegration` compiled `/internal/shared` before the site came: nothing is
 * written there after it, so `export-opcache` need not walk it again.
 */
let sharedCompiled = false;
/** Resolves when the runtime sends `site-ready` (boot option `awaitSite`), with the boot options known only then. */
let releaseSite: (late: SiteReadyOptions) => void = () => undefined;
const siteReady = new Promise<SiteReadyOptions>((resolve) => (releaseSite = resolve));
/** Resolves when the runtime sends `core-ready` (`PhpWorkerHost.releaseCore`), with what to precompile. */
let releaseCore: (precompile: CorePrecompile) => void = () => undefined;
const coreReady = new Promise<CorePrecompile>((resolve) => (releaseCore = resolve));

// One operation at a time: PHP is single-threaded and the runtime relies on ordering.
let queue: Promise<unknown> = Promise.resolve();

async function handle(request: WorkerRequest): Promise<unknown> {
  switch (request.op) {
    case "run": {
      if (php.fileExists(LAST_ERROR_PATH)) php.unlink(LAST_ERROR_PATH);
      clearReport();
      const output = startOutputSink({ stdout: request.capBytes, stderr: request.capBytes }, request.id);
      markWork(request.mark);
      let stdout: CappedStream;
      let stderr: CappedStream;
      let exitCode: number;
      try {
        // WP_CODEBOX_SCRIPT: a script, not an HTTP request (assets/runtime/request-report.php).
        const response = await php.runStream({ code: request.code, env: request.env, $_SERVER: { WP_CODEBOX_SCRIPT: "1" } });
        // The streams end when PHP does, so the sink's totals are final by then.
        [stdout, stderr] = await Promise.all([readCapped(response.stdout, request.capBytes, () => output.total.stdout), readCapped(response.stderr, request.capBytes, () => output.total.stderr)]);
        exitCode = await response.exitCode;
      } catch (error) {
        sink = undefined;
        engineCrashed = errorMessage(error);
        const fatal = engineCrashFatal(error, scriptOf(request.code));
        if (!fatal) throw error;
        // What it printed before it died reached the runtime as output events; the runtime fills it in.
        const partial = { data: new Uint8Array(0), bytes: 0, truncated: false };
        const clockUs = virtualClockUs();
        return { exitCode: 255, stdout: partial, stderr: partial, fatal, ...(clockUs !== undefined ? { clockUs } : {}) };
      }
      sink = undefined;
      let fatal;
      if (php.fileExists(LAST_ERROR_PATH)) {
        try {
          fatal = JSON.parse(php.readFileAsText(LAST_ERROR_PATH));
        } catch {
          fatal = undefined;
        }
      }
      const report = takeReport();
      fatal ??= report.fatal;
      const clockUs = virtualClockUs();
      return { exitCode, stdout, stderr, fatal, ...(report.dbErrors?.length ? { dbErrors: report.dbErrors } : {}), ...(clockUs !== undefined ? { clockUs } : {}) };
    }
    case "http": {
      clearReport();
      // PHP's stderr during a request is drained unread: none of it needs to be queued.
      const output = startOutputSink({ stdout: request.capBytes, stderr: 0 });
      markWork(request.mark);
      let status: number;
      let headers: Record<string, string[]>;
      let body: CappedStream;
      try {
        const response = await handler.requestStreamed({
          method: request.method as "GET",
          url: request.url,
          headers: request.headers,
          body: request.body,
        });
        body = await readCapped(response.stdout, request.capBytes, () => output.total.stdout);
        // Drain stderr so the request completes.
        await readCapped(response.stderr, 0);
        status = await response.httpStatusCode;
        headers = await response.headers;
      } catch (error) {
        sink = undefined;
        engineCrashed = errorMessage(error);
        const fatal = engineCrashFatal(error, new URL(request.url).pathname);
        if (!fatal) throw error;
        // What a web server answers when PHP dies without a response.
        const text = new TextEncoder().encode("Internal Server Error\n");
        const clockUs = virtualClockUs();
        return { status: 500, headers: { "content-type": ["text/plain"] }, body: { data: text, bytes: text.byteLength, truncated: false }, fatal, ...(clockUs !== undefined ? { clockUs } : {}) };
      }
      sink = undefined;
      const report = takeReport();
      const fatal = report.fatal ?? takeLoggedFatal();
      const clockUs = virtualClockUs();
      return { status, headers, body, ...(fatal ? { fatal } : {}), ...(report.dbErrors?.length ? { dbErrors: report.dbErrors } : {}), ...(clockUs !== undefined ? { clockUs } : {}) };
    }
    case "forget-cached-files":
      return forgetCachedNodes(php, request.vfsPath);
    case "export-opcache":
      if (request.compileDirs?.length && !sharedCompiled) await compileIntoOpcache(php, { dirs: request.compileDirs });
      return { pack: packOpcacheDir(php, OPCACHE_DIR) };
    case "mount":
      await mountOne(php, request.mount);
      return true;
    case "read-file":
      return php.fileExists(request.path) ? php.readFileAsBuffer(request.path) : null;
    case "write-file":
      php.mkdir(request.path.slice(0, request.path.lastIndexOf("/")) || "/");
      php.writeFile(request.path, request.data);
      return true;
    case "restore-boot-fs":
      return restoreBootFs();
  }
}

async function boot(): Promise<void> {
  const started = Date.now();
  const fileLockManager = options.lockPort ? await consumeAPISync<FileLockManager>(options.lockPort) : undefined;
  handler = await bootWordPressAndRequestHandler({
    siteUrl: options.siteUrl,
    phpVersion: options.phpVersion,
    createPhpRuntime: async () =>
      loadNodeRuntime(options.phpVersion as "8.3", { fileLockManager, extensions: (options.extensions ?? []) as "intl"[], emscriptenOptions: { processId: options.processId, ...(precompiledPhpWasm ? { instantiateWasm: instantiatePrecompiled(precompiledPhpWasm) } : {}), postRun: [moveCStack], printErr: (text: string) => post({ event: "engine-message", text }), preRun: [
            phpNetworkGuardPreRun(
              options.network,
              (denied) => post({ event: "network-denied", ...denied }),
              options.origin ? { origin: options.origin, selfCallPort: options.selfCallPort, onOpen: () => post({ event: "self-call" }) } : undefined,
            ),
          ] } }),
    maxPhpInstances: 1,
    sapiName: "cli",
    cookieStore: false,
    onPHPInstanceCreated: async (instance) => {
      bootMarks.push(["PHP runtime ready", Date.now()]);
      if (options.awaitSite) {
        // PHP starts (its extensions, intl's ICU data among them, load) while the site installs.
        // Not on a virtual clock: there every clock read of the boot belongs to its fixed sequence.
        if (options.determinism?.clockOriginUs === undefined) await instance.run({ code: "<?php " });
        bootMarks.push(["PHP started (first request)", Date.now()]);
        // The list given at boot, or the one sent once the tree is there, unless the site comes first.
        const precompile = options.precompile ?? (await Promise.race([coreReady, siteReady.then(() => undefined)]));
        if (precompile) {
          await precompileCore(instance, precompile);
          precompiled = true;
        }
        // Mounted once Playground's boot is done (boot()).
        if (options.siteAfterBoot) return;
        Object.assign(options, await siteReady);
        bootMarks.push(["site released", Date.now()]);
      } else if (options.precompile) await precompileCore(instance, options.precompile);
      await mountSite(instance);
    },
    sqliteIntegrationPluginZip: new File([readFileSync(options.sqliteZipPath)], "sqlite-database-integration.zip"),
    // Read once the PHP instance is created and the site mounted: `awaitSite` may set it only then.
    get wordpressInstallMode() {
      return options.installMode;
    },
    constants: options.constants,
    phpIniEntries: {
      display_errors: "stderr",
      html_errors: "0",
      log_errors: "0",
      error_reporting: String(32767),
      // Compiled scripts persist in a host cache; sandbox-specific code (wp-content, /workspace)
      // is never cached there so one sandbox can't run another's stale bytecode.
      "opcache.blacklist_filename": "/internal/shared/opcache-blacklist.txt",
      "opcache.max_accelerated_files": "10000",
      // Keep compiled scripts in (wasm) shared memory too, not only in the file cache: a request
      // then reuses what the previous one compiled instead of unserialising every script again
      // (a WordPress-loading run-php: ~85 → ~45 ms CPU). The file cache still seeds new workers.
      // php-wasm's PHP 7.4 and 8.0 builds cannot allocate OPcache's shared memory ("Unable to
      // allocate shared memory segment", a fatal error before WordPress loads): file cache only.
      "opcache.file_cache_only": FILE_CACHE_ONLY_PHP.has(options.phpVersion) ? "1" : "0",
      // Check every included file's mtime on every request: with the shared-memory cache the
      // default (every 2 s of request time, which follows the virtual clock) would run a PHP file
      // the sandbox rewrote a moment ago (a generated include, a core file) from its old bytecode.
      // It costs a stat per included file: measured 20-40 ms CPU per WordPress load of ~430 files.
      "opcache.revalidate_freq": "0",
      // Without the file cache a file-cache-only build has no OPcache at all: PHP then fails to
      // start (exit -2, nothing printed), so there the installer keeps it.
      ...(options.quickCompile ? { "opcache.optimization_level": "0", ...(FILE_CACHE_ONLY_PHP.has(options.phpVersion) ? {} : { "opcache.file_cache": "" }) } : {}),
      "zend.max_allowed_stack_size": PHP_STACK_LIMIT,
      // With a virtual clock every clock read moves time on. PHP's realpath cache reads the clock
      // on each path lookup to expire its entries, so how much of it a worker had warmed (a fresh
      // boot, a recycled sandbox) changed the instants the next PHP code saw. A TTL of 0 keeps
      // entries for the worker's life and never reads the clock for them.
      ...(options.determinism?.clockOriginUs !== undefined ? { realpath_cache_ttl: "0" } : {}),
    },
    // /internal/wp-codebox/code holds the file each run-php or REST call writes and runs: rewritten
    // per call, it must never come from a cache (two calls within one second share an mtime).
    // The environment's must-use plugin holds the sandbox's secrets: never compiled into a cache
    // that a sandbox's worker may save as the installed site's seed.
    createFiles: { "/internal/shared/opcache-blacklist.txt": `/wordpress/wp-content/*\n/workspace/*\n/internal/eval.php\n/internal/wp-codebox/code/*\n${INSTALLER_MU_PLUGIN}\n${ENV_MU_PLUGIN}\n` },
  });
  php = await handler.getPrimaryPhp();
  bootMarks.push([options.siteAfterBoot ? "WordPress runtime booted (SQLite integration set up, no site yet)" : "WordPress boot done (SQLite integration set up)", Date.now()]);
  // php-wasm swaps in a new PHP runtime on the request after any that exited non-zero (every PHP
  // fatal error) and after every 400 requests. That cost ~1.2 s on the next request, threw away
  // OPcache's shared memory, and left this worker watching the old runtime's file system (a
  // recycled pool sandbox kept a session's files). A fatal error ends a PHP request as on any
  // server; a crashed engine (a trap) replaces the whole worker instead (`engineCrashed`).
  // Rotation also hid a file descriptor leak of php-wasm's: `closeLeakedRequestStreams` closes it.
  (php as unknown as { rotateRuntime: () => Promise<void> }).rotateRuntime = async () => undefined;
  php.mkdir("/internal/wp-codebox/code");
  php.writeFile(REPORT_PRELOAD, REPORT_SOURCE);
  if (options.origin) php.writeFile("/internal/shared/mu-plugins/0-wp-codebox-self-calls.php", selfCallMuPlugin());
  php.writeFile("/internal/shared/mu-plugins/0-wp-codebox-theme-patterns.php", themePatternsMuPlugin());
  php.writeFile("/internal/shared/mu-plugins/0-wp-codebox-debug-display.php", debugDisplayMuPlugin());
  php.writeFile("/internal/shared/preload/0-wp-codebox-sqlite-grammar.php", sqliteGrammarPreload());
  if (options.muPlugin) php.writeFile(ENV_MU_PLUGIN, options.muPlugin);
  stabiliseMtimes(php, "/internal/shared");
  if (options.siteAfterBoot) {
    // While the site installs: only this package's code has run here.
    if (precompiled) await warmSqliteIntegration(php);
    Object.assign(options, await siteReady);
    bootMarks.push(["site released", Date.now()]);
    await mountSite(php);
  }
  const fs = (php as unknown as Record<symbol, { FS?: EmscriptenFs }>)[__private__dont__use]?.FS;
  if (fs) {
    replaceRandomDevices(fs as unknown as Parameters<typeof replaceRandomDevices>[0]);
    bootFs = new MemoryFsBootState(fs, [OPCACHE_DIR]);
    bootFs.capture();
  }
  const clockUs = virtualClockUs();
  bootMarks.push(["ready", Date.now()]);
  post({ event: "ready", bootMs: Date.now() - started, bootMarks, printed: printedCounters.buffer as SharedArrayBuffer, ...(clockUs !== undefined ? { clockUs } : {}) });
}

/**
 * Takes the `blocking => false` self-calls PHP left during the work that just ended (the self-call
 * must-use plugin writes one JSON file each), oldest first; malformed files are dropped.
 */
function takeDeferredRequests(): DeferredRequest[] {
  if (!php?.isDir(DEFERRED_REQUESTS_DIR)) return [];
  const out: DeferredRequest[] = [];
  for (const name of php.listFiles(DEFERRED_REQUESTS_DIR).sort()) {
    const path = `${DEFERRED_REQUESTS_DIR}/${name}`;
    try {
      const raw = JSON.parse(php.readFileAsText(path)) as { method?: unknown; url?: unknown; headers?: unknown; body?: unknown };
      if (typeof raw.method === "string" && typeof raw.url === "string") {
        const headers: Record<string, string> = {};
        if (raw.headers && typeof raw.headers === "object") for (const [k, v] of Object.entries(raw.headers)) if (typeof v === "string") headers[k.toLowerCase()] = v;
        out.push({ method: raw.method, url: raw.url, headers, ...(typeof raw.body === "string" ? { body: new Uint8Array(Buffer.from(raw.body, "base64")) } : {}) });
      }
    } catch {
      // A half-written file (the work was killed while writing it) is not a request.
    }
    php.unlink(path);
  }
  return out;
}

/** The output devices php-wasm points PHP's stdout and stderr at during a request. */
const REQUEST_OUTPUT_DEVICES = new Set(["/request/stdout", "/request/stderr"]);

/**
 * Closes the file descriptors php-wasm leaves open on its `/request/stdout` and `/request/stderr`
 * devices. Each PHP request (`run` and `http` alike) opens both and `dup2`s them onto fds 1 and 2
 * (php_wasm.c, `redirect_stream_to_file`) but never closes the fds it opened: two Emscripten
 * streams per request stay open for good. php-wasm's runtime rotation (every 400 requests) used to
 * throw them away; with rotation off, a worker reached Emscripten's `FS.MAX_OPEN_FDS` (4096)
 * after ~1,900 commands, and then runs failed: an exit 255, "ok" runs with empty output, then
 * "zend_mm_heap corrupted" and an engine crash. Called between requests only (the message queue
 * runs one at a time), when no stream on these devices is in use: fds 1 and 2 point back at the
 * terminal by then, and PHP has closed its own streams.
 */
function closeLeakedRequestStreams(): void {
  const fs = (php as unknown as Record<symbol, { FS?: { streams: ({ fd: number; path: string } | null)[]; close(stream: unknown): void } }> | undefined)?.[__private__dont__use]?.FS;
  if (!fs?.streams) return;
  for (const stream of fs.streams) {
    if (!stream || stream.fd <= 2 || !REQUEST_OUTPUT_DEVICES.has(stream.path)) continue;
    try {
      fs.close(stream);
    } catch {
      // closed already
    }
  }
}

port.on("message", (request: WorkerRequest | { op: "site-ready"; late?: SiteReadyOptions } | { op: "core-ready"; precompile: CorePrecompile }) => {
  if (request.op === "site-ready") return releaseSite(request.late ?? {});
  if (request.op === "core-ready") return releaseCore(request.precompile);
  queue = queue.then(async () => {
    // Never run anything on a crashed engine: the runtime moves this request to a replacement.
    if (engineCrashed) return;
    let reply: WorkerResponse;
    let transfer: ArrayBuffer[] | undefined;
    try {
      const value = await handle(request);
      reply = { id: request.id, ok: true, value };
      transfer = transferablesOf(request, value);
    } catch (error) {
      reply = { id: request.id, ok: false, error: { message: errorMessage(error), stack: (error as Error | undefined)?.stack } };
    }
    if (engineCrashed) {
      post({ ...reply, engineCrashed });
      return;
    }
    closeLeakedRequestStreams();
    // Before the reply: the runtime counts them as running before it learns the work is done.
    if (request.op === "run" || request.op === "http") for (const deferred of takeDeferredRequests()) post({ event: "deferred-request", request: deferred });
    post(reply, transfer);
  });
});

boot().catch((error: unknown) => {
  // What PHP said, not php-wasm's "=== Stdout === … === Stderr ===" template around it.
  post({ event: "boot-failed", error: { message: bootFailureMessage(error), stack: (error as Error | undefined)?.stack } });
});
