// One scenario of bench/first-boot.ts in a process of its own, as a plain ES module: run by Node
// with no flags when the bench measures the build, so no TypeScript loader (tsx) is in the
// process, its module loading or its PHP worker threads; with `--conditions=source --import tsx`
// when it measures the sources. Prints the scenario's figures as one JSON line on stdout:
// { readyMs, firstResultMs, output, stages? }, times in ms from the start of this module.
//   node first-boot-child.mjs codebox CACHE_DIR VERSION
//   node first-boot-child.mjs runcli SITE_DIR INSTALL_MODE
const t0 = performance.now();
const WP_CODE = "<?php require_once '/wordpress/wp-load.php'; echo get_bloginfo('version');";
const [kind, a, b] = process.argv.slice(2);

/** wp-codebox from nothing in memory to the first WordPress-loading result, starting its first PHP worker as the CLI does. */
async function codebox(cacheDir, version) {
  const stages = [];
  const { prestartPhpWorker } = await import("@wp-codebox/runtime-playground/worker-prestart");
  prestartPhpWorker();
  const { createPlaygroundBackend } = await import("@wp-codebox/runtime-playground");
  const runtime = await createPlaygroundBackend({ cacheDir, offline: true }).create({
    wordpress: { version },
    onProgress: (message) => stages.push([message.slice(0, 60), Math.round(performance.now() - t0)]),
  });
  const readyMs = performance.now() - t0;
  const first = await runtime.execute({ command: "wordpress.run-php", args: [`code=${WP_CODE}`, "bootstrap=none"] });
  const firstResultMs = performance.now() - t0;
  await runtime.dispose();
  return { readyMs, firstResultMs, output: first.stdout, stages };
}

/** Plain runCLI on an unpacked copy of the release, PHP 8.3 (`install-from-existing-files` installs it; then the installed copy). */
async function runcli(siteDir, installMode) {
  const { startPlainRunCli } = await import("./plain-runcli.mjs");
  const cli = await startPlainRunCli(siteDir, installMode);
  const readyMs = performance.now() - t0;
  const first = await cli.playground.run({ code: WP_CODE });
  const firstResultMs = performance.now() - t0;
  await cli[Symbol.asyncDispose]();
  return { readyMs, firstResultMs, output: first.text };
}

const figures = kind === "codebox" ? await codebox(a, b) : await runcli(a, b);
process.stdout.write(`${JSON.stringify(figures)}\n`);
process.exit(0);
