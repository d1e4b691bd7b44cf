#!/usr/bin/env node
/**
 * Turns tasks/<name>/{candidate.php,assertions.php} into one wp-codebox recipe per task and a task
 * file, build/tasks.jsonl. Each recipe installs the candidate as a must-use plugin (so it loads
 * like real code, in every later request), then runs assert.php and the task's assertions in a
 * request of their own; the task passes when the printed JSON says "passed": true.
 *
 *   node examples/grading/make-tasks.mjs [tasks-dir] [build-dir]
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const tasksDir = resolve(process.argv[2] ?? join(here, "tasks"));
const buildDir = resolve(process.argv[3] ?? join(here, "build"));
mkdirSync(buildDir, { recursive: true });

/** PHP source without its opening tag, so files can follow one another in one program. */
const body = (file) => readFileSync(file, "utf8").replace(/^\s*<\?php/, "");
const helpers = body(join(here, "assert.php"));

const lines = [];
for (const name of readdirSync(tasksDir).sort()) {
  const candidate = readFileSync(join(tasksDir, name, "candidate.php"), "utf8");
  const install = `<?php wp_mkdir_p( WPMU_PLUGIN_DIR ); file_put_contents( WPMU_PLUGIN_DIR . '/candidate.php', base64_decode( '${Buffer.from(candidate).toString("base64")}' ) ); echo 'installed';`;
  writeFileSync(join(buildDir, `${name}.assertions.php`), `<?php${helpers}\n${body(join(tasksDir, name, "assertions.php"))}`);
  const recipe = {
    schema: "wp-codebox/workspace-recipe/v1",
    name: `grade ${name}`,
    steps: [
      { name: "install the candidate", command: "wordpress.run-php", args: { code: install }, expect: { stdoutContains: "installed" } },
      { name: "run the assertions", command: "wordpress.run-php", args: { "code-file": `${name}.assertions.php` }, expect: { json: { path: "$.passed", equals: true } } },
    ],
  };
  writeFileSync(join(buildDir, `${name}.recipe.json`), `${JSON.stringify(recipe, null, 2)}\n`);
  lines.push(JSON.stringify({ id: name, recipe: `${name}.recipe.json`, timeout: "10m" }));
}
writeFileSync(join(buildDir, "tasks.jsonl"), `${lines.join("\n")}\n`);
console.error(`${lines.length} task(s) written to ${join(buildDir, "tasks.jsonl")}`);
