/**
 * Every reader of a user-named file refuses what is not a regular file, or is over its cap, at
 * once and with its code: a FIFO, a socket, a character device, a directory, a sparse file over
 * every cap and a path with a NUL byte, against each reader (run args, recipes and their `@file`
 * values, episode scripts, policies, task files and what they name, --wp-cli-phar, mounts, the
 * async readers the commands use). The readers run in a child process that is killed if it
 * hangs, so a reader that blocks on the FIFO fails the test instead of stopping it. Then the CLI
 * itself: `@/dev/zero` and `@FIFO` end with exit 2.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, ftruncateSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { INPUT_FILE_CAPS, QUOTED_VALUE_MAX_CHARS, assertUsableArtifactsDir, checkCommandInput, planRun, resolveMounts } from "@wp-codebox/runtime-core";

const REPO_ROOT = fileURLToPath(new URL("../", import.meta.url));
const PROBE = fileURLToPath(new URL("./fixtures/input-file-probe.ts", import.meta.url));
const MAIN = fileURLToPath(new URL("../packages/cli/src/main.ts", import.meta.url));
/** Generous: a hang is what this guards against, not slowness. */
const HANG_GUARD_MS = 120_000;

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs node with `args`; SIGKILL after `HANG_GUARD_MS` (a reader blocked on a FIFO ignores SIGTERM). */
function runNode(args: string[], cwd = REPO_ROOT): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", ...args], { cwd, stdio: ["ignore", "pipe", "pipe"], timeout: HANG_GUARD_MS, killSignal: "SIGKILL" });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

let dir: string;
let socketServer: Server;
const files: Record<string, string> = {};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "wp-codebox-input-files-"));
  files.fifo = join(dir, "pipe.json");
  execFileSync("mkfifo", [files.fifo]);
  files.socket = join(dir, "sock.json");
  socketServer = createServer();
  await new Promise<void>((resolve) => socketServer.listen(files.socket, resolve));
  files["character device"] = "/dev/zero";
  files.directory = join(dir, "folder.json");
  mkdirSync(files.directory);
  // Sparse: over every cap without writing 64 MiB.
  files["over every cap"] = join(dir, "huge.json");
  const fd = openSync(files["over every cap"], "w");
  ftruncateSync(fd, Math.max(...Object.values(INPUT_FILE_CAPS)) + 1);
  closeSync(fd);
  files["NUL byte in the path"] = join(dir, "a\0b.json");
});

after(async () => {
  await new Promise<void>((resolve) => socketServer.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/**
 * What each reader must answer. `code` is the error's code; `inner` a code its message must name
 * (a recipe or task file lists each problem as `code: message` under its own code).
 */
function expected(file: string, reader: string): { code: string; inner?: string } {
  const fileCode = file === "over every cap" ? "input-file-too-large" : "input-file-invalid";
  if (reader === "mount source") {
    if (file === "directory" || file === "over every cap") return { code: "ok" };
    return { code: file === "NUL byte in the path" ? "invalid-mount" : "mount-special-file" };
  }
  // A `path` argument with a NUL byte is a bad argument value (as is a NUL in `as=`).
  const nulArg = file === "NUL byte in the path" && (reader === "run code-file=" || reader === "run phpunit=" || reader === "recipe step code-file");
  if (reader.startsWith("recipe step")) return { code: "invalid-recipe", inner: nulArg ? "invalid-argument" : fileCode };
  if (reader.startsWith("batch task →")) return { code: "invalid-batch", inner: fileCode };
  if (nulArg) return { code: "invalid-argument" };
  return { code: fileCode };
}

describe("every reader of a user-named file, against every kind of bad file", () => {
  let lines: { file: string; reader: string; code: string; message: string }[] = [];
  let probe: Outcome;

  before(async () => {
    probe = await runNode([PROBE, JSON.stringify({ dir, files })]);
    lines = probe.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as (typeof lines)[number]);
  });

  it("the probe finished (no reader blocked)", () => {
    assert.equal(probe.signal, null, `killed after ${HANG_GUARD_MS} ms: a reader blocked. Last line: ${probe.stdout.trim().split("\n").at(-1)}\n${probe.stderr}`);
    assert.equal(probe.code, 0, probe.stderr);
    assert.ok(lines.length >= Object.keys(files).length * 20, `${lines.length} results`);
  });

  it("each reader answers each bad file with its code", () => {
    const wrong = lines
      .map((l) => ({ ...l, want: expected(l.file, l.reader) }))
      .filter((l) => l.code !== l.want.code || (l.want.inner !== undefined && !l.message.includes(l.want.inner)))
      .map((l) => `${l.reader} × ${l.file}: got ${l.code} (${l.message.slice(0, 300)}), want ${l.want.code}${l.want.inner ? ` naming ${l.want.inner}` : ""}`);
    assert.deepEqual(wrong, []);
  });

  it("the message says what the file is, or names the cap and the kind", () => {
    const said = (file: string, reader: string) => lines.find((l) => l.file === file && l.reader === reader)!.message;
    assert.match(said("fifo", "run --arg params-json=@"), /is a FIFO \(named pipe\): pass a regular file/);
    assert.match(said("socket", "--policy FILE"), /policy file ".*sock\.json" is a socket/);
    assert.match(said("character device", "recipe run FILE"), /recipe "\/dev\/zero" is a character device/);
    assert.match(said("directory", "batch task file"), /batch task file ".*" is a directory/);
    assert.match(said("over every cap", "--wp-cli-phar"), /than the 64 MiB cap for a WP-CLI phar/);
    assert.match(said("over every cap", "episode run FILE"), /than the 4 MiB cap for an episode script/);
    assert.match(said("NUL byte in the path", "readJsonArg @"), /\\u0000/);
  });
});

describe("special files inside a mount source", () => {
  for (const [name, make] of [
    ["a FIFO", (p: string) => execFileSync("mkfifo", [p])],
    ["a socket", (p: string) => execFileSync(process.execPath, ["-e", `require("net").createServer().listen(${JSON.stringify(p)}, () => process.exit(0))`])],
  ] as const) {
    it(`${name} deep in the tree is mount-special-file, naming it`, () => {
      const source = mkdtempSync(join(dir, "mount-"));
      mkdirSync(join(source, "inc", "deep"), { recursive: true });
      writeFileSync(join(source, "plugin.php"), "<?php\n");
      const special = join(source, "inc", "deep", "thing");
      make(special);
      assert.throws(
        () => resolveMounts([{ source, target: "/wordpress/wp-content/plugins/p", mode: "readonly" }], dir),
        (e: any) => e.code === "mount-special-file" && e.data.file === special && e.message.includes("inc/deep/thing"),
      );
    });
  }
});

describe("bad input values are refused before boot (exit 2 codes)", () => {
  const source = () => {
    const s = join(dir, "src");
    mkdirSync(s, { recursive: true });
    return s;
  };
  const cases: [string, () => unknown, string][] = [
    ["a NUL byte in a mount target", () => resolveMounts([{ source: source(), target: "/workspace/a\0b", mode: "readonly" }], dir), "invalid-mount"],
    ["a NUL byte in a mount source", () => resolveMounts([{ source: `${source()}\0x`, target: "/workspace/a", mode: "readonly" }], dir), "invalid-mount"],
    ["a mount target that is the whole wp-content", () => resolveMounts([{ source: source(), target: "/wordpress/wp-content", mode: "readonly" }], dir), "invalid-mount"],
    ["… written with a trailing slash", () => resolveMounts([{ source: source(), target: "/wordpress/wp-content/", mode: "readonly" }], dir), "invalid-mount"],
    ["… written with a dot segment", () => resolveMounts([{ source: source(), target: "/wordpress/./wp-content", mode: "readonly" }], dir), "invalid-mount"],
    ["the SQLite database folder", () => resolveMounts([{ source: source(), target: "/wordpress/wp-content/database", mode: "readonly" }], dir), "invalid-mount"],
    ["… or a folder inside it", () => resolveMounts([{ source: source(), target: "/wordpress/wp-content/database/x", mode: "readonly" }], dir), "invalid-mount"],
    ["the db.php drop-in", () => resolveMounts([{ source: source(), target: "/wordpress/wp-content//db.php", mode: "readonly" }], dir), "invalid-mount"],
    ["a NUL byte in as=user:", () => checkCommandInput("wordpress.run-php", ["code=1", "as=user:ad\0min"], dir), "invalid-argument"],
    ["a NUL byte in --artifacts", () => assertUsableArtifactsDir(join(dir, "out\0x")), "artifacts-dir-invalid"],
    ["a NUL byte in --wordpress", () => planRun({ kind: "command", command: "wordpress.run-php", args: ["code=1"], wordpressPath: "wp\0.zip" }, { cwd: dir }), "wordpress-source-invalid"],
    ["a FIFO as --wordpress", () => planRun({ kind: "command", command: "wordpress.run-php", args: ["code=1"], wordpressPath: files.fifo! }, { cwd: dir }), "wordpress-source-invalid"],
  ];
  for (const [name, run, code] of cases) {
    it(name, () => {
      assert.throws(run, (e: any) => e.code === code && !/[\0]/.test(e.message));
    });
  }

  // Every message that quotes a value the caller typed quotes at most QUOTED_VALUE_MAX_CHARS of it.
  const big = "Q".repeat(10_000);
  const long: [string, () => unknown][] = [
    ["an unknown command", () => checkCommandInput(`wordpress.${big}`, [], dir)],
    ["an unknown argument", () => checkCommandInput("wordpress.run-php", [`${big}=1`], dir)],
    ["a missing mount source", () => resolveMounts([{ source: join(dir, big.slice(0, 200), big.slice(0, 200)), target: "/workspace/x", mode: "readonly" }], dir)],
    ["a mount target", () => resolveMounts([{ source: source(), target: `/etc/${big}`, mode: "readonly" }], dir)],
    ["a duration", () => planRun({ kind: "command", command: "wordpress.run-php", args: ["code=1"], timeout: big }, { cwd: dir })],
  ];
  for (const [name, run] of long) {
    it(`a 10,000-character value in ${name} is quoted short`, () => {
      assert.throws(run, (e: any) => typeof e.code === "string" && !e.message.includes("Q".repeat(QUOTED_VALUE_MAX_CHARS + 1)));
    });
  }

  it("the wp-content refusal says why", () => {
    assert.throws(
      () => resolveMounts([{ source: source(), target: "/wordpress/wp-content", mode: "readonly" }], dir),
      (e: any) => /SQLite database/.test(e.message) && /wp-content\/plugins\/<name>/.test(e.message),
    );
  });

  it("folders below wp-content stay mountable", () => {
    assert.equal(resolveMounts([{ source: source(), target: "/wordpress/wp-content/uploads/data", mode: "readonly" }], dir).length, 1);
  });

  it("a long value is quoted to 200 characters in every message", () => {
    const long = `user:${"x".repeat(5000)}\0`;
    assert.throws(
      () => checkCommandInput("wordpress.run-php", ["code=1", `as=${long}`], dir),
      (e: any) => e.code === "invalid-argument" && !e.message.includes("x".repeat(201)) && e.message.includes("x".repeat(195)) && /4806 more characters/.test(e.message),
    );
    assert.throws(
      () => resolveMounts([{ source: source(), target: `/etc/${"y".repeat(3000)}`, mode: "readonly" }], dir),
      (e: any) => e.code === "mount-target-outside-sandbox" && !e.message.includes("y".repeat(201)),
    );
  });
});

describe("the CLI with @/dev/zero, @FIFO and other special files", () => {
  for (const [name, value] of [
    ["@/dev/zero", () => "@/dev/zero"],
    ["@FIFO", () => `@${files.fifo}`],
  ] as const) {
    it(`run --arg steps-json=${name} → exit 2 at once, input-file-invalid`, async () => {
      const run = await runNode([MAIN, "run", "--command", "wordpress.browser-actions", "--arg", `steps-json=${value()}`, "--artifacts", join(dir, `out-${name.slice(1).replace(/\W/g, "")}`)]);
      assert.equal(run.signal, null, `killed after ${HANG_GUARD_MS} ms: the CLI blocked on ${name}`);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /^error\[input-file-invalid\]: The @file argument ".*" is a (character device|FIFO \(named pipe\)): pass a regular file/m);
    });
  }

  const cliCases: [string, () => string[], RegExp][] = [
    ["recipe run FIFO", () => ["recipe", "run", files.fifo!], /^error\[input-file-invalid\]: The recipe ".*" is a FIFO/m],
    ["episode run /dev/zero", () => ["episode", "run", "/dev/zero"], /^error\[input-file-invalid\]: The episode script "\/dev\/zero" is a character device/m],
    ["run --policy FIFO", () => ["run", "--command", "wordpress.run-php", "--arg", "code=1", "--policy", files.fifo!], /^error\[input-file-invalid\]: The policy file ".*" is a FIFO/m],
    [
      "run --mount of a folder holding a FIFO",
      () => {
        const source = mkdtempSync(join(dir, "cli-mount-"));
        execFileSync("mkfifo", [join(source, "pipe")]);
        return ["run", "--command", "wordpress.run-php", "--arg", "code=1", "--mount", `${source}:/workspace/data:ro`];
      },
      /^error\[mount-special-file\]: ".*pipe" inside mount source ".*" is a FIFO/m,
    ],
  ];
  for (const [name, argv, message] of cliCases) {
    it(`${name} → exit 2 before boot`, async () => {
      const run = await runNode([MAIN, ...argv(), "--artifacts", join(dir, `out-${name.replace(/\W/g, "")}`)]);
      assert.equal(run.signal, null, `killed after ${HANG_GUARD_MS} ms: the CLI blocked`);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
    });
  }
});

describe("a regular code-file still runs (boots WordPress)", { timeout: 300_000 }, () => {
  it("run --arg code-file=PATH reads it through the bounded reader and runs it", async () => {
    const work = mkdtempSync(join(dir, "code-file-"));
    writeFileSync(join(work, "probe.php"), "<?php echo 'probe ran: ' . (function_exists('get_bloginfo') ? 'wordpress' : 'bare');\n");
    const run = await runNode([MAIN, "run", "--command", "wordpress.run-php", "--arg", `code-file=${join(work, "probe.php")}`, "--json", "--artifacts", join(work, "out")]);
    assert.equal(run.signal, null);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout) as { result: { status: string; stdout: string } };
    assert.equal(out.result.status, "ok");
    assert.equal(out.result.stdout, "probe ran: wordpress");
  });
});
