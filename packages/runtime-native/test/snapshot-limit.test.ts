/**
 * The memory a native snapshot may hold: the dump plus the carried wp-content files, refused with
 * `state-export-failed` naming the total and the biggest files past the limit.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { MAX_SNAPSHOT_BYTES, assertCarriedWithin } from "../src/native-snapshots.js";

const file = (path: string, bytes: number) => ({ path, bytes, sha256: "0".repeat(64) });

describe("assertCarriedWithin", () => {
  const cases: { name: string; dump: number; files: ReturnType<typeof file>[]; max?: number; refused: boolean }[] = [
    { name: "a small snapshot", dump: 40_000, files: [file("wp-content/a.txt", 10)], refused: false },
    { name: "exactly the limit", dump: 100, files: [file("wp-content/a.bin", 900)], max: 1000, refused: false },
    { name: "one byte over through files", dump: 100, files: [file("wp-content/a.bin", 901)], max: 1000, refused: true },
    { name: "over through the dump alone", dump: 1001, files: [], max: 1000, refused: true },
    { name: "many 1 GiB files past the default limit", dump: 1, files: [1, 2, 3].map((i) => file(`wp-content/big${i}.bin`, 1 << 30)), refused: true },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.refused ? "refused" : "allowed"}`, () => {
      const run = () => assertCarriedWithin(c.dump, c.files, c.max ?? MAX_SNAPSHOT_BYTES);
      if (!c.refused) return run();
      assert.throws(run, (error: unknown) => {
        assert.ok(error instanceof WpCodeboxError);
        assert.equal(error.code, "state-export-failed");
        assert.match(error.message, /over the limit/);
        assert.match(error.message, c.files.length ? new RegExp(c.files[0]!.path.replace(/\./g, "\\.")) : /biggest: \./);
        return true;
      });
    });
  }
});
