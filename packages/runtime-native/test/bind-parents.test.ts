/**
 * Folders above a bind that nothing provides are made world-traversable: bubblewrap run by root
 * makes them 0700, and the sandbox's own uid could not reach the bind below (a /workspace mount).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { bindParents, type Bind } from "../src/bubblewrap.js";

const bind = (target: string): Bind => ({ source: "/host", target, readOnly: false });

const cases: { name: string; binds: Bind[]; parents: string[] }[] = [
  { name: "a mount under /workspace", binds: [bind("/wordpress"), bind("/workspace/code")], parents: ["/workspace"] },
  { name: "a deeper one", binds: [bind("/workspace/a/b/c")], parents: ["/workspace", "/workspace/a", "/workspace/a/b"] },
  { name: "inside another bind", binds: [bind("/wordpress"), bind("/wordpress/wp-content"), bind("/wordpress/wp-content/plugins/mine")], parents: [] },
  { name: "under a root folder the sandbox always has", binds: [bind("/internal/wp-codebox"), bind("/run/mysqld")], parents: [] },
  { name: "two mounts sharing a parent, listed once", binds: [bind("/workspace/a"), bind("/workspace/b")], parents: ["/workspace"] },
  { name: "a bind at the top", binds: [bind("/wordpress")], parents: [] },
];

for (const c of cases) {
  test(`bind parents: ${c.name}`, () => {
    assert.deepEqual(bindParents(c.binds), c.parents);
  });
}
