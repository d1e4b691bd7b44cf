// Plain @wp-playground/cli runCLI, from process start to the first result of the PHP code given as
// argv[3], on the WordPress tree argv[2] (already installed). A plain ES module run by Node (no
// tsx), so the timing holds only runCLI's own start-up. Prints "RESULT <output>" on stdout.
const [site, code] = process.argv.slice(2);
const { startPlainRunCli } = await import("./plain-runcli.mjs");
const cli = await startPlainRunCli(site, "do-not-attempt-installing");
const first = await cli.playground.run({ code });
process.stdout.write(`RESULT ${first.text}\n`);
await cli[Symbol.asyncDispose]();
process.exit(0);
