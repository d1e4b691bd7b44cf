/**
 * How the warm PHP process's output is cut into runs (`RunStream`): everything before the run's
 * marker is the run's, split across chunks or not, capped and counted; a run stopped before its
 * marker (a deadline, an interrupt) keeps all it printed, including the tail held back while the
 * marker might still be arriving.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { RunStream, parseRunEnd } from "../src/php-server.js";

const MARKER = Buffer.from("\0" + "m".repeat(32));

describe("RunStream", () => {
  const cases: { name: string; chunks: string[]; cap: number; finished: boolean; data: string; bytes: number; truncated: boolean }[] = [
    { name: "finished in one chunk", chunks: [`hello${MARKER}:0\0`], cap: 100, finished: true, data: "hello", bytes: 5, truncated: false },
    { name: "finished, marker split across chunks", chunks: ["hel", `lo${MARKER.subarray(0, 10)}`, `${MARKER.subarray(10)}:0\0`], cap: 100, finished: true, data: "hello", bytes: 5, truncated: false },
    { name: "stopped with less output than a marker", chunks: ["started"], cap: 100, finished: false, data: "started", bytes: 7, truncated: false },
    { name: "stopped after several chunks", chunks: ["a".repeat(40), "b".repeat(18)], cap: 100, finished: false, data: "a".repeat(40) + "b".repeat(18), bytes: 58, truncated: false },
    { name: "stopped with a tail that looks like the marker's start", chunks: [`x${MARKER.subarray(0, 5)}`], cap: 100, finished: false, data: `x${MARKER.subarray(0, 5)}`, bytes: 6, truncated: false },
    { name: "stopped past the cap", chunks: ["a".repeat(30), "b".repeat(30)], cap: 50, finished: false, data: "a".repeat(30) + "b".repeat(20), bytes: 60, truncated: true },
    { name: "stopped, cap reached inside the held tail", chunks: ["abcdefghij"], cap: 4, finished: false, data: "abcd", bytes: 10, truncated: true },
    { name: "finished past the cap", chunks: ["a".repeat(60), `${MARKER}:0\0`], cap: 50, finished: true, data: "a".repeat(50), bytes: 60, truncated: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const stream = new RunStream(c.cap, MARKER);
      let rest: Buffer | undefined;
      for (const chunk of c.chunks) rest ??= stream.push(Buffer.from(chunk, "latin1"));
      assert.equal(rest !== undefined, c.finished);
      const value = stream.value();
      assert.equal(value.data.toString("latin1"), c.data);
      assert.equal(value.bytes, c.bytes);
      assert.equal(value.truncated, c.truncated);
    });
  }
});

describe("parseRunEnd", () => {
  const cases: { name: string; after: string; want: ReturnType<typeof parseRunEnd> }[] = [
    { name: "exit code with the connections counted", after: ":0:2:3\0", want: { exitCode: 0, connections: { accepted: 2, attempted: 3 } } },
    { name: "no connection made", after: ":255:0:0\0", want: { exitCode: 255, connections: { accepted: 0, attempted: 0 } } },
    { name: "the counters unreadable: exit code only", after: ":1\0", want: { exitCode: 1 } },
    { name: "not all arrived yet", after: ":0:2", want: undefined },
    { name: "nothing yet", after: "", want: undefined },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(parseRunEnd(c.after), c.want));
  }
});
