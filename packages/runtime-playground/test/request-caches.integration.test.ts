/**
 * Integration: the two things a sandbox worker keeps from one request to the next so that loading
 * WordPress costs less (theme block patterns on WordPress 6.4/6.5, the SQLite integration's MySQL
 * grammar) give exactly what WordPress computes without them, and follow every change of what
 * they were made from.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

let runtime: PlaygroundRuntime;

before(async () => {
  runtime = await createPlaygroundBackend().create({});
});
after(async () => {
  await runtime?.dispose();
});

async function php(code: string, bootstrap: "wordpress" | "none" = "wordpress"): Promise<string> {
  const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`, `bootstrap=${bootstrap}`] });
  assert.equal(result.status, "ok", `${result.error?.message ?? ""} ${result.stderr}`);
  return result.stdout;
}

const PATTERNS_DIR = "/wordpress/wp-content/themes/twentytwentyfour/patterns";
const DROP_CACHES = "array_map('unlink', glob('/internal/wp-codebox/theme-patterns/*.php') ?: []); array_map('unlink', glob('/internal/shared/opcache/wp-codebox/sqlite-grammar/*.php') ?: []);";
/**
 * Loads WordPress (bare, so hooks can be set first) and prints the theme patterns WordPress
 * registered plus how many `_doing_it_wrong()` notices pattern parsing raised.
 */
const REGISTERED = (before = "") => `<?php ${before}
$GLOBALS['wpcb_notices'] = [];
// Added to what is there already (Playground's preload registers its own hooks this way).
$GLOBALS['wp_filter']['doing_it_wrong_run'][10][] = ['function' => function ($f, $m) { $GLOBALS['wpcb_notices'][] = $f; }, 'accepted_args' => 2];
require '/wordpress/wp-load.php';
$theme = array_values(array_filter(WP_Block_Patterns_Registry::get_instance()->get_all_registered(), fn ($p) => isset($p['filePath'])));
usort($theme, fn ($a, $b) => strcmp($a['name'], $b['name']));
echo json_encode(['patterns' => $theme, 'notices' => $GLOBALS['wpcb_notices'], 'cached' => count(glob('/internal/wp-codebox/theme-patterns/*.php') ?: [])]);`;

type Registered = { patterns: Array<{ name: string; title: string; categories?: string[] }>; notices: string[]; cached: number };
const registered = async (before = ""): Promise<Registered> => JSON.parse(await php(REGISTERED(before), "none")) as Registered;

function pattern(slug: string, title: string): string {
  return `<?php\n/**\n * Title: ${title}\n * Slug: ${slug}\n * Categories: text\n */\n?>\n<!-- wp:paragraph --><p>${title}</p><!-- /wp:paragraph -->\n`;
}

describe("per-request caches of a sandbox worker", { timeout: 300_000 }, () => {
  it("theme patterns: the cached registry equals WordPress's own, and follows every change of the pattern files", async () => {
    const computed = await registered(DROP_CACHES);
    assert.ok(computed.patterns.length > 10, "Twenty Twenty-Four's patterns are registered");
    const fromCache = await registered();
    assert.equal(fromCache.cached, 1, "an entry is kept after a request");
    assert.deepEqual(fromCache.patterns, computed.patterns, "the same registry as without the cache");

    // Pattern files written "now" are not cached for two seconds (mtimes count whole seconds), so
    // each change is dated: an old mtime lets the cache work, a future one keeps a file "recent".
    const write = (file: string, body: string, age: number) =>
      php(`<?php $f = ${JSON.stringify(`${PATTERNS_DIR}/${file}`)}; file_put_contents($f, ${JSON.stringify(body)}); touch($f, time() - (${age}));`, "none");
    const titleOf = (r: Registered, name: string) => r.patterns.find((p) => p.name === name)?.title;
    const steps: Array<[string, () => Promise<unknown>, (r: Registered) => void]> = [
      ["a pattern added", () => write("wpcb-added.php", pattern("wpcb/added", "Added one"), 100), (r) => assert.equal(titleOf(r, "wpcb/added"), "Added one")],
      ["its title edited (other size)", () => write("wpcb-added.php", pattern("wpcb/added", "Edited title"), 90), (r) => assert.equal(titleOf(r, "wpcb/added"), "Edited title")],
      ["its title edited (same size, other mtime)", () => write("wpcb-added.php", pattern("wpcb/added", "Edited TITLE"), 80), (r) => assert.equal(titleOf(r, "wpcb/added"), "Edited TITLE")],
      // An edit within the same second keeps size, mtime and inode: only not caching recent files
      // shows it (a future mtime keeps the file recent however slow the machine is).
      ["a recent pattern", () => write("wpcb-recent.php", pattern("wpcb/recent", "Recent AAAA"), -3600), (r) => assert.equal(titleOf(r, "wpcb/recent"), "Recent AAAA")],
      ["edited in place within its second", () => write("wpcb-recent.php", pattern("wpcb/recent", "Recent BBBB"), -3600), (r) => assert.equal(titleOf(r, "wpcb/recent"), "Recent BBBB")],
      ["both deleted", () => php(`<?php unlink('${PATTERNS_DIR}/wpcb-added.php'); unlink('${PATTERNS_DIR}/wpcb-recent.php');`, "none"), (r) => assert.equal(titleOf(r, "wpcb/added") ?? titleOf(r, "wpcb/recent"), undefined)],
    ];
    for (const [what, change, check] of steps) {
      await change();
      const now = await registered();
      check(now);
      assert.deepEqual(now.patterns, (await registered(DROP_CACHES)).patterns, `${what}: the same registry as without the cache`);
    }
  });

  it("theme patterns: nothing is kept while a pattern file is under two seconds old, then an entry is kept", async () => {
    // Every pattern file changed "now", then the first request: too recent to keep.
    const recent = await registered(`${DROP_CACHES} foreach (glob('${PATTERNS_DIR}/*.php') as $f) touch($f);`);
    assert.equal(recent.cached, 0, "no entry for files changed within the last two seconds");
    // Waiting is the point here (the host's clock must move on), not something measured.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const later = await registered();
    assert.equal(later.cached, 1, "an entry once the files are two seconds old by the host's clock");
    assert.deepEqual(later.patterns, recent.patterns);
  });

  it("theme patterns: a pattern WordPress complains about is complained about at every request", async () => {
    await php(`<?php file_put_contents('${PATTERNS_DIR}/wpcb-no-slug.php', "<?php\\n/**\\n * Title: No slug\\n */\\n");`, "none");
    try {
      for (let i = 0; i < 3; i++) {
        const r = await registered();
        assert.deepEqual(r.notices, ["get_block_patterns"], `request ${i + 1}: the notice WordPress raises without a cache`);
      }
    } finally {
      await php(`<?php unlink('${PATTERNS_DIR}/wpcb-no-slug.php');`, "none");
    }
  });

  it("SQLite grammar: kept after a request, put back equal to a freshly built one, and queries answer", async () => {
    await php(`<?php ${DROP_CACHES}`, "none");
    assert.equal(await php("<?php echo get_option('blogname');"), "wp-codebox");
    const compare = await php(
      `<?php require '/wordpress/wp-load.php';
      $kept = glob('/internal/shared/opcache/wp-codebox/sqlite-grammar/*.php');
      $property = new ReflectionProperty('WP_MySQL_On_SQLite', 'mysql_grammar');
      $property->setAccessible(true);
      $restored = $property->getValue();
      $built = new WP_Parser_Grammar(require '/internal/shared/sqlite-database-integration/wp-includes/database/mysql/mysql-grammar.php');
      echo json_encode(['kept' => count($kept), 'class' => get_class($GLOBALS['wpdb']), 'equal' => get_object_vars($restored) === get_object_vars($built), 'posts' => (int) $GLOBALS['wpdb']->get_var("SELECT COUNT(*) FROM {$GLOBALS['wpdb']->posts}")]);`,
      "none",
    );
    const r = JSON.parse(compare) as { kept: number; equal: boolean; posts: number; class: string };
    assert.equal(r.kept, 1);
    assert.equal(r.equal, true, "the grammar put back is the one the driver builds");
    assert.ok(r.posts >= 1, `a query answers (${compare})`);
  });
});
