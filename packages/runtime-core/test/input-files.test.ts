/**
 * The bounded readers of user-named files: each kind's cap (at the cap is fine, one byte over is
 * refused, from `stat` and from the read), sync and async readers agree, a missing file is told
 * apart, and `quoteValue` keeps messages short. Special files against every reader are in
 * test/input-files.integration.test.ts at the root (they need a child process).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { closeSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  INPUT_FILE_CAPS,
  QUOTED_VALUE_MAX_CHARS,
  WpCodeboxError,
  checkInputFile,
  isMissingInputFile,
  pathArgumentKind,
  quoteValue,
  readInputFile,
  readInputFileSync,
  readInputText,
  readInputTextSync,
  readJsonArg,
  type InputFileKind,
} from "../src/index.js";

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "wp-codebox-input-caps-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A sparse file of `size` bytes (zeros; nothing written to disk). */
function sparse(name: string, size: number): string {
  const path = join(dir, name);
  const fd = openSync(path, "w");
  ftruncateSync(fd, size);
  closeSync(fd);
  return path;
}

const KINDS = Object.keys(INPUT_FILE_CAPS) as InputFileKind[];

describe("caps per kind", () => {
  it("the caps are the documented ones", () => {
    const MiB = 1024 * 1024;
    assert.deepEqual(INPUT_FILE_CAPS, {
      "arg-file": 16 * MiB,
      "code-file": 16 * MiB,
      "phpunit-entry": 16 * MiB,
      "task-file": 16 * MiB,
      "wp-cli-phar": 64 * MiB,
      recipe: 4 * MiB,
      "episode-script": 4 * MiB,
      policy: 1 * MiB,
      "baseline-image": 32 * MiB,
    });
  });

  for (const kind of KINDS) {
    it(`${kind}: exactly the cap passes, one byte more is input-file-too-large naming the cap and the kind`, () => {
      const cap = INPUT_FILE_CAPS[kind];
      assert.deepEqual(checkInputFile(sparse(`${kind}-at-cap`, cap), kind).sizeBytes, cap);
      const over = sparse(`${kind}-over`, cap + 1);
      for (const read of [() => checkInputFile(over, kind), () => readInputFileSync(over, kind)]) {
        assert.throws(read, (e: any) => {
          assert.equal(e.code, "input-file-too-large");
          assert.equal(e.data.kind, kind);
          assert.equal(e.data.capBytes, cap);
          assert.equal(e.data.sizeBytes, cap + 1);
          assert.match(e.message, new RegExp(`than the ${cap / 1024 / 1024} MiB cap for an? `));
          return true;
        });
      }
    });
  }

  it("the async reader refuses over the cap too", async () => {
    await assert.rejects(readInputFile(sparse("policy-async-over", INPUT_FILE_CAPS.policy + 1), "policy"), { code: "input-file-too-large" });
  });

  it("a file at the cap is read whole, by both readers", async () => {
    const path = sparse("policy-read-at-cap", INPUT_FILE_CAPS.policy);
    assert.equal(readInputFileSync(path, "policy").length, INPUT_FILE_CAPS.policy);
    assert.equal((await readInputFile(path, "policy")).length, INPUT_FILE_CAPS.policy);
  });
});

describe("reading", () => {
  it("sync and async readers return the same text, through a symlink too", async () => {
    const path = join(dir, "probe.php");
    writeFileSync(path, "<?php echo 'KEKC博客 🧪';\n");
    const link = join(dir, "link.php");
    symlinkSync(path, link);
    for (const p of [path, link]) {
      assert.equal(readInputTextSync(p, "code-file"), "<?php echo 'KEKC博客 🧪';\n");
      assert.equal(await readInputText(p, "code-file"), "<?php echo 'KEKC博客 🧪';\n");
    }
  });

  it("a missing file is input-file-invalid that isMissingInputFile recognises; a directory is not 'missing'", async () => {
    const missing = join(dir, "nope.json");
    assert.throws(() => readInputFileSync(missing, "recipe"), (e: unknown) => e instanceof WpCodeboxError && e.code === "input-file-invalid" && isMissingInputFile(e));
    await assert.rejects(readInputFile(missing, "recipe"), (e: unknown) => isMissingInputFile(e));
    assert.throws(() => checkInputFile(dir, "recipe"), (e: unknown) => e instanceof WpCodeboxError && e.data.fileType === "a directory" && !isMissingInputFile(e));
    assert.equal(isMissingInputFile(new Error("ENOENT")), false);
  });

  it("path arguments map to their kinds", () => {
    assert.deepEqual(["code-file", "phpunit", "other"].map(pathArgumentKind), ["code-file", "phpunit-entry", "arg-file"]);
  });
});

describe("quoteValue", () => {
  const cases: [string, unknown, string][] = [
    ["a short value, JSON-quoted", "soon", '"soon"'],
    ["a NUL byte and a newline are visible", "a\0b\nc", '"a\\u0000b\\nc"'],
    ["a non-string through String()", 42, '"42"'],
    ["exactly the limit is kept whole", "x".repeat(QUOTED_VALUE_MAX_CHARS), JSON.stringify("x".repeat(QUOTED_VALUE_MAX_CHARS))],
    ["one over the limit is cut, with the count", "x".repeat(QUOTED_VALUE_MAX_CHARS + 1), `${JSON.stringify("x".repeat(QUOTED_VALUE_MAX_CHARS))}… (1 more characters)`],
    ["a surrogate pair at the cut is not split", `${"x".repeat(QUOTED_VALUE_MAX_CHARS - 1)}🧪tail`, `${JSON.stringify("x".repeat(QUOTED_VALUE_MAX_CHARS - 1))}… (6 more characters)`],
  ];
  for (const [name, value, want] of cases) it(name, () => assert.equal(quoteValue(value), want));

  it("16 MiB in, a short message out", () => {
    assert.ok(quoteValue("z".repeat(16 * 1024 * 1024)).length < 260);
  });
});

describe("confine: what was opened is checked, not the name", () => {
  // A recipe's `@file` is checked by name and then read; a symlink swapped in between must be
  // refused by what the open handle really is.
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "wp-codebox-confine-"));
    writeFileSync(join(dir, "inside.txt"), "inside");
    mkdirSync(join(dir, "outside"));
    writeFileSync(join(dir, "outside", "secret.txt"), "secret");
    mkdirSync(join(dir, "folder"));
    symlinkSync(join(dir, "outside", "secret.txt"), join(dir, "folder", "link.txt"));
    symlinkSync(join(dir, "inside.txt"), join(dir, "folder", "ok.txt"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const within = (root: string) => (real: string) => {
    if (!real.startsWith(`${root}/`)) throw new WpCodeboxError("path-not-allowed", `${real} is outside ${root}`);
  };
  const readers: [string, (path: string, confine: (real: string) => void) => Promise<unknown>][] = [
    ["readInputFileSync", async (p, confine) => readInputFileSync(p, "arg-file", { confine })],
    ["readInputTextSync", async (p, confine) => readInputTextSync(p, "arg-file", { confine })],
    ["readInputFile", (p, confine) => readInputFile(p, "arg-file", { confine })],
    ["readJsonArg", async (p, confine) => readJsonArg(`@${p}`, dir, { confine })],
  ];
  for (const [name, read] of readers) {
    it(`${name}: a link out of the folder is refused with the real path; one within is read`, async () => {
      const seen: string[] = [];
      await assert.rejects(read(join(dir, "folder", "link.txt"), (real) => { seen.push(real); within(join(dir, "folder"))(real); }), (e: WpCodeboxError) => e.code === "path-not-allowed");
      assert.deepEqual(seen, [realpathSync(join(dir, "outside", "secret.txt"))]);
      writeFileSync(join(dir, "inside.txt"), '"inside"');
      await read(join(dir, "folder", "ok.txt"), within(realpathSync(dir)));
    });
  }
});
