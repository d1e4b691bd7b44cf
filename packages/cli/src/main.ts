/**
 * The `wp-codebox` executable: runs the CLI and owns `process.exit`. `runCli` never throws; it
 * returns the exit code after printing any error as `error[<code>]: <message>`. Output to a pipe
 * whose reader went away is dropped without a word; the exit code is the command's own.
 */
import { runCli } from "./cli.js";
import { dropOutputToClosedPipes } from "./cli-io.js";

// `wp-codebox … | head -1`: a reader that closes the pipe early ends nothing but the output.
dropOutputToClosedPipes();
const code = await runCli(process.argv.slice(2));
// Let piped stdout/stderr drain before exiting (a worker thread left behind must not keep us alive).
await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
await new Promise<void>((resolve) => process.stderr.write("", () => resolve()));
process.exit(code);
