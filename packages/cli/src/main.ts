/**
 * The `wp-codebox` executable: runs the CLI and owns `process.exit`. `runCli` never throws; it
 * returns the exit code after printing any error as `error[<code>]: <message>`.
 */
import { runCli } from "./cli.js";

const code = await runCli(process.argv.slice(2));
// Let piped stdout/stderr drain before exiting (a worker thread left behind must not keep us alive).
await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
await new Promise<void>((resolve) => process.stderr.write("", () => resolve()));
process.exit(code);
