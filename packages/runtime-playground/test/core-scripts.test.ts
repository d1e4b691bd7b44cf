import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { coreScriptsToPrecompile, fileLevelIncludes, resolveIncludePath } from "../src/site/core-scripts.js";

// [include expression as written after `require`, the including script, the path it resolves to]
const RESOLVE_CASES: [string, string, string | undefined][] = [
  ["ABSPATH . WPINC . '/load.php'", "wp-settings.php", "wp-includes/load.php"],
  ["ABSPATH . 'wp-config.php'", "wp-load.php", "wp-config.php"],
  ['ABSPATH . "wp-admin/includes/plugin.php"', "wp-admin/includes/admin.php", "wp-admin/includes/plugin.php"],
  ["__DIR__ . '/class-wp-block.php'", "wp-includes/blocks.php", "wp-includes/class-wp-block.php"],
  ["dirname( __FILE__ ) . '/wp-blog-header.php'", "index.php", "wp-blog-header.php"],
  ["BLOCKS_PATH . 'archives.php'", "wp-includes/blocks/index.php", "wp-includes/blocks/archives.php"],
  ["ABSPATH . 'wp-admin/includes/../includes/file.php'", "wp-admin/includes/admin.php", "wp-admin/includes/file.php"],
  // Not followed: a variable, a function call, a path that leaves the tree, not a PHP file, relative.
  ["$file", "wp-settings.php", undefined],
  ["ABSPATH . $path", "wp-settings.php", undefined],
  ["get_template_directory() . '/functions.php'", "wp-settings.php", undefined],
  ["ABSPATH . '../outside.php'", "wp-load.php", undefined],
  ["ABSPATH . WPINC . '/version.txt'", "wp-settings.php", undefined],
  ["'relative.php'", "wp-settings.php", undefined],
];

test("resolveIncludePath resolves literal paths and the core constants, and nothing else", () => {
  for (const [expr, from, expected] of RESOLVE_CASES) {
    assert.equal(resolveIncludePath(expr, from), expected, `${expr} (from ${from})`);
  }
});

// [PHP source, the include expressions found outside function bodies]
const SCAN_CASES: [string, string[]][] = [
  ["<?php\nrequire ABSPATH . 'a.php';\nrequire_once( ABSPATH . 'b.php' );\n", ["ABSPATH . 'a.php'", "ABSPATH . 'b.php'"]],
  // A minified build: whole files on one line.
  ["<?php\n define( 'WPINC', 'wp-includes' ); require ABSPATH . WPINC . '/version.php'; include_once ABSPATH . WPINC . '/load.php'; wp_check();", ["ABSPATH . WPINC . '/version.php'", "ABSPATH . WPINC . '/load.php'"]],
  // Inside an `if` at file level: followed. Inside a function, a closure or a method: not.
  ["<?php if ( $x ) { require ABSPATH . 'a.php'; }", ["ABSPATH . 'a.php'"]],
  ["<?php function f( $a = array() ) { if ( $a ) { require ABSPATH . 'lazy.php'; } } require ABSPATH . 'after.php';", ["ABSPATH . 'after.php'"]],
  ["<?php $f = function () use ( $x ) { require 'lazy.php'; }; require 'after.php';", ["'after.php'"]],
  ["<?php class C { public $p = 1; public function m(): void { require 'lazy.php'; } } require 'after.php';", ["'after.php'"]],
  ["<?php interface I { public function m(); } require 'after.php';", ["'after.php'"]],
  ["<?php $g = fn() => 1; require 'after.php';", ["'after.php'"]],
  // Braces and keywords in strings, comments, heredocs and HTML are not code.
  ["<?php $s = 'function x() {'; require 'a.php';", ["'a.php'"]],
  [`<?php $s = "require \\" }"; require 'a.php';`, ["'a.php'"]],
  ["<?php // function { require 'no.php';\nrequire 'a.php';", ["'a.php'"]],
  ["<?php # }\n/* function f() { */ require 'a.php';", ["'a.php'"]],
  ["<?php $h = <<<EOT\nfunction { require 'no.php';\nEOT;\nrequire 'a.php';", ["'a.php'"]],
  ["<?php if ( $x ) { ?><div>{ function</div><?php } require 'a.php';", ["'a.php'"]],
  // Words that only contain the keyword, and variables named like it.
  ["<?php $require = 1; required(); my_include(); require 'a.php';", ["'a.php'"]],
  ["no PHP here { require 'x.php'; }", []],
];

test("fileLevelIncludes finds the includes outside function bodies", () => {
  for (const [source, expected] of SCAN_CASES) {
    assert.deepEqual(fileLevelIncludes(source), expected, source);
  }
});

test("coreScriptsToPrecompile follows file-level includes from the entry points, within the tree", async () => {
  const tree = mkdtempSync(join(tmpdir(), "wp-codebox-core-scripts-"));
  const write = (rel: string, text: string): void => {
    mkdirSync(dirname(join(tree, rel)), { recursive: true });
    writeFileSync(join(tree, rel), text);
  };
  try {
    write("wp-load.php", "<?php\nif ( file_exists( ABSPATH . 'wp-config.php' ) ) {\n\trequire_once ABSPATH . 'wp-config.php';\n}\n");
    write("wp-config.php", "<?php\nrequire_once ABSPATH . 'wp-settings.php';\n");
    write(
      "wp-settings.php",
      [
        "<?php",
        "require ABSPATH . WPINC . '/load.php';",
        "require_once( ABSPATH . WPINC . '/plugin.php' );",
        "include ABSPATH . WPINC . '/missing.php';",
        "require $dynamic;",
        "require ABSPATH . 'wp-content/plugins/a.php';",
        "function later() {",
        "\trequire ABSPATH . WPINC . '/on-demand.php';",
        "}",
      ].join("\n"),
    );
    write("wp-includes/load.php", "<?php\nrequire __DIR__ . '/nested/deep.php';\nrequire ABSPATH . WPINC . '/plugin.php';\n");
    write("wp-includes/nested/deep.php", "<?php\n");
    write("wp-includes/plugin.php", "<?php\n");
    write("wp-includes/on-demand.php", "<?php\n");
    write("wp-content/plugins/a.php", "<?php\n");
    // Named on-demand scripts and the block patterns' folder, where the tree has them.
    write("wp-includes/cache.php", "<?php\nrequire_once ABSPATH . WPINC . '/class-wp-object-cache.php';\n");
    write("wp-includes/class-wp-object-cache.php", "<?php\n");
    write("wp-includes/block-patterns/b.php", "<?php\n");
    write("wp-includes/block-patterns/a.php", "<?php\n");
    write("wp-includes/block-patterns/readme.txt", "not a script");
    const scripts = await coreScriptsToPrecompile(tree);
    assert.deepEqual(scripts, [
      "wp-load.php",
      "wp-settings.php",
      "wp-includes/cache.php",
      "wp-includes/class-wp-object-cache.php",
      "wp-includes/block-patterns/a.php",
      "wp-includes/block-patterns/b.php",
      "wp-includes/load.php",
      "wp-includes/plugin.php",
      "wp-includes/nested/deep.php",
    ]);
    // wp-config.php is the site's (its include is indented); on-demand includes and wp-content are left out.
    for (const left of ["wp-config.php", "wp-includes/on-demand.php", "wp-content/plugins/a.php", "wp-includes/missing.php"]) {
      assert.ok(!scripts.includes(left), left);
    }
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
});

test("coreScriptsToPrecompile of a folder without WordPress is empty", async () => {
  const empty = mkdtempSync(join(tmpdir(), "wp-codebox-core-scripts-"));
  try {
    assert.deepEqual(await coreScriptsToPrecompile(empty), []);
    assert.deepEqual(await coreScriptsToPrecompile(join(empty, "absent")), []);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});
