/** A full disk outside the bundle folder (the cache, a scratch folder) is an environment problem (exit 3), never an internal bug. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ERROR_CODES, exitCodeForCategory, serializeError } from "../src/errors.js";

const systemError = (code: string, message: string, path?: string) => Object.assign(new Error(message), { code, ...(path ? { path } : {}) });

const cases: { name: string; thrown: unknown; code: string; path?: string }[] = [
  { name: "ENOSPC from fs.write (no path)", thrown: systemError("ENOSPC", "ENOSPC: no space left on device, write"), code: "host-disk-full" },
  { name: "ENOSPC from fs.open with a path", thrown: systemError("ENOSPC", "ENOSPC: no space left on device, open '/c/sites/x.sqlite'", "/c/sites/x.sqlite"), code: "host-disk-full", path: "/c/sites/x.sqlite" },
  { name: "EDQUOT (quota exhausted)", thrown: systemError("EDQUOT", "EDQUOT: disk quota exceeded, write"), code: "host-disk-full" },
  { name: "ENOSPC known only from the message (lost its code crossing a worker)", thrown: new Error("ENOSPC: no space left on device, write"), code: "host-disk-full" },
  { name: "a plain object with code ENOSPC", thrown: { code: "ENOSPC", message: "no space left" }, code: "host-disk-full" },
  { name: "EACCES stays an internal error", thrown: systemError("EACCES", "EACCES: permission denied, open '/x'", "/x"), code: "internal-error" },
  { name: "a message that only mentions ENOSPC later stays internal", thrown: new Error("unexpected value ENOSPC in table"), code: "internal-error" },
  { name: "a string stays internal", thrown: "ENOSPC", code: "internal-error" },
];

for (const c of cases) {
  test(`disk full: ${c.name} → ${c.code}`, () => {
    const error = serializeError(c.thrown);
    assert.equal(error.code, c.code, error.message);
    if (c.code !== "host-disk-full") return;
    assert.equal(exitCodeForCategory(ERROR_CODES["host-disk-full"]), 3);
    assert.match(error.message, /is full/);
    assert.match(error.message, /WP_CODEBOX_CACHE_DIR/);
    assert.equal(error.data?.path, c.path);
  });
}
