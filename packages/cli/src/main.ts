/**
 * The `wp-codebox` executable: runs the CLI and owns `process.exit`. `runCli` never throws; it
 * returns the exit code after printing any error as `error[<code>]: <message>`. Output to a pipe
 * whose reader went away is dropped without a word; the exit code is the command's own.
 */
import { prestartPhpWorker } from "@wp-codebox/runtime-playground/worker-prestart";
import { dropOutputToClosedPipes } from "./cli-io.js";
import { bootsLocalSandbox, phpVersionArg } from "./prestart.js";

// Before the CLI itself loads (cli.js is imported below, not above): a PHP worker thread started
// now imports php-wasm on the other core meanwhile (about 120 ms off a one-shot run).
if (bootsLocalSandbox(process.argv.slice(2))) prestartPhpWorker(phpVersionArg(process.argv.slice(2)));
const { runCli } = await import("./cli.js");
// `wp-codebox … | head -1`: a reader that closes the pipe early ends nothing but the output.
dropOutputToClosedPipes();
const code = await runCli(process.argv.slice(2));
// Let piped stdout/stderr drain before exiting (a worker thread left behind must not keep us alive).
await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
await new Promise<void>((resolve) => process.stderr.write("", () => resolve()));
process.exit(code);
