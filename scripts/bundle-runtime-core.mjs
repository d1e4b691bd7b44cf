#!/usr/bin/env node
// Bundles runtime-core's compiled modules (and TypeBox, canonicalize) into one ES module,
// packages/runtime-core/dist/runtime-core.js, which the package exports to Node. Node 20 has no
// module compile cache, and resolving and linking ~270 small ES modules (200 of them TypeBox)
// took ~240 ms of every CLI start: the single file loads in ~40 ms. Runs after `tsc -b` (npm run
// build). Ajv stays external: runtime-core loads it on the first validation only.
// Every package imports runtime-core through this one entry, so there is still one copy of its
// classes (`WpCodeboxError` instanceof checks hold across packages).
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const dist = fileURLToPath(new URL("../packages/runtime-core/dist/", import.meta.url));
await build({
  entryPoints: [`${dist}index.js`],
  outfile: `${dist}runtime-core.js`,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["ajv", "ajv-formats"],
  sourcemap: "linked",
  logLevel: "warning",
});
