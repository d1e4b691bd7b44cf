// Loaded with `node --require` into a benchmarked child process: on exit, writes the process's
// CPU time (all threads, PHP worker included) and peak RSS to $WP_CODEBOX_BENCH_CPU_FILE as JSON.
// CPU time barely moves with other load on the machine, unlike wall time.
"use strict";
const { writeFileSync } = require("node:fs");
const file = process.env.WP_CODEBOX_BENCH_CPU_FILE;
if (file) {
  process.on("exit", () => {
    const usage = process.resourceUsage();
    writeFileSync(file, JSON.stringify({ cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, maxRssKb: usage.maxRSS }));
  });
}
