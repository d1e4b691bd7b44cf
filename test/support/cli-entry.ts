/**
 * How tests start the CLI. By default from its TypeScript sources through tsx, so a single test
 * file runs without a build. `npm test` builds first and sets WP_CODEBOX_TEST_CLI=built: spawned
 * CLIs then run the compiled entry, because tsx compiling the sources again in every spawned
 * process (about 2 s each) dominated the tests that spawn many short CLI runs.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const SOURCE_MAIN = fileURLToPath(new URL("../../packages/cli/src/main.ts", import.meta.url));
const BUILT_MAIN = fileURLToPath(new URL("../../packages/cli/dist/main.js", import.meta.url));

function cliEntry(): string[] {
  if (process.env.WP_CODEBOX_TEST_CLI !== "built") return ["--conditions=source", "--import", "tsx", SOURCE_MAIN];
  if (!existsSync(BUILT_MAIN)) throw new Error(`WP_CODEBOX_TEST_CLI=built but ${BUILT_MAIN} is missing: run npm run build`);
  return [BUILT_MAIN];
}

/** Node arguments that start `wp-codebox`: append the CLI's own argv. */
export const CLI_ENTRY: readonly string[] = cliEntry();
