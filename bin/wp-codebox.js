#!/usr/bin/env node
// The wp-codebox executable: runs the compiled CLI (packages/cli/dist, built by `tsc -b` in npm's
// `prepare`). Exit code 3 (environment problem) when it has not been built.
import { existsSync } from "node:fs";

const main = new URL("../packages/cli/dist/main.js", import.meta.url);
if (!existsSync(main)) {
  process.stderr.write("error[cli-not-built]: wp-codebox is not built: run npm install (or npm run build)\n");
  process.exit(3);
}
await import(main.href);
