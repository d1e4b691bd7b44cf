import { test } from "node:test";
import assert from "node:assert/strict";
import {
  buildPluginCheckReport,
  coreScreens,
  creditProblems,
  editorOf,
  findingsFromProblems,
  problemKey,
  withoutScreenBaseline,
  type CoreScreenLinks,
  type PluginInventory,
  type RecordedProblem,
} from "../src/index.js";

const links: CoreScreenLinks = {
  frontPage: "/",
  post: "/?p=5",
  page: "/?page_id=6",
  category: "/?cat=2",
  search: "/?s=wp-codebox",
  notFound: "/?p=1000006",
  feed: "/?feed=rss2",
  login: "/wp-login.php",
  lostPassword: "/wp-login.php?action=lostpassword",
  register: null,
};

test("core screens: the front end as anonymous and as subscriber, login anonymously, wp-admin and importers as admin", () => {
  const screens = coreScreens(links, [{ id: "acme", name: "Acme", url: "/wp-admin/admin.php?import=acme", callback: { file: "/p/acme.php", line: 9 } }]);
  const rows = screens.map((s) => [s.id, s.kind, s.actor, s.target, s.skippedReason === undefined ? "" : "skipped"]);
  const front = ["front-page", "single-post", "page", "category-archive", "search-results", "not-found", "rss-feed"];
  const targets = ["/", "/?p=5", "/?page_id=6", "/?cat=2", "/?s=wp-codebox", "/?p=1000006", "/?feed=rss2"];
  assert.deepEqual(rows, [
    ...front.map((name, i) => [`front-end:${name}:anonymous`, "front-end", "anonymous", targets[i], ""]),
    ...front.map((name, i) => [`front-end:${name}:subscriber`, "front-end", "subscriber", targets[i], ""]),
    ["login-screen:login", "login-screen", "anonymous", "/wp-login.php", ""],
    ["login-screen:lost-password", "login-screen", "anonymous", "/wp-login.php?action=lostpassword", ""],
    ["login-screen:register", "login-screen", "anonymous", "/wp-login.php?action=register", "skipped"],
    ...["index", "profile", "users", "edit", "post-new", "options-general", "plugins"].map((p) => [`admin-screen:/wp-admin/${p}.php`, "admin-screen", "admin", `/wp-admin/${p}.php`, ""]),
    ["importer:acme", "importer", "admin", "/wp-admin/admin.php?import=acme", ""],
  ]);
  assert.deepEqual(screens.at(-1)!.callback, { file: "/p/acme.php", line: 9 });
  assert.match(screens.find((s) => s.id === "login-screen:register")!.skippedReason!, /users_can_register/);
  // Registration open: the form is visited at the URL WordPress gave.
  const open = coreScreens({ ...links, register: "/wp-login.php?action=register&x=1" });
  assert.deepEqual(open.filter((s) => s.id === "login-screen:register").map((s) => [s.target, s.skippedReason]), [["/wp-login.php?action=register&x=1", undefined]]);
});

test("a screen's baseline drops only the problems that same screen had before activation", () => {
  const core: RecordedProblem = { level: "deprecated", message: "Core's own", file: "/wordpress/wp-includes/x.php", line: 3 };
  const mine: RecordedProblem = { level: "warning", message: "Undefined array key", file: "/p/a.php", line: 7 };
  const notice: RecordedProblem = { level: "admin-notice-error", message: "Core says", file: "", line: 0 };
  const baseline = { status: 200, keys: new Set([problemKey(core), problemKey(notice)]) };
  assert.deepEqual(withoutScreenBaseline([core, mine, notice], baseline), [mine]);
  assert.deepEqual(withoutScreenBaseline([core, mine], undefined), [core, mine]);
  // Same message at another line, or another level, is a different problem.
  assert.deepEqual(withoutScreenBaseline([{ ...core, line: 4 }, { ...notice, level: "admin-notice-warning" }], baseline).length, 2);
});

test("admin notices become admin-notice findings: warning for notice-error, notice for notice-warning", () => {
  const rows: [RecordedProblem["level"], string, string][] = [
    ["admin-notice-error", "warning", "notice-error: Acme needs a key."],
    ["admin-notice-warning", "notice", "notice-warning: Acme needs a key."],
  ];
  for (const [level, severity, message] of rows) {
    const [f] = findingsFromProblems([{ level, message: "Acme needs a key.", file: "/p/acme.php", line: 12 }], "admin-screen:/wp-admin/index.php", "files/check/php-errors/1.jsonl");
    assert.deepEqual(f, { severity, kind: "admin-notice", surface: "admin-screen:/wp-admin/index.php", message, file: "/p/acme.php", line: 12, evidence: "files/check/php-errors/1.jsonl" });
  }
  // The same notice on every screen is one finding listing the screens.
  const raw = ["index", "users"].flatMap((p) => findingsFromProblems([{ level: "admin-notice-error", message: "Acme needs a key.", file: "/p/acme.php", line: 12 }], `admin-screen:/wp-admin/${p}.php`, "e"));
  const empty: PluginInventory = { adminPages: [], restRoutes: [], shortcodes: [], blocks: [], cronHooks: [], ajaxActions: [], postTypes: [], taxonomies: [], options: [], tables: [], importers: [], files: [], callbacks: [] };
  const report = buildPluginCheckReport({
    plugin: { file: "acme/acme.php", name: "Acme", version: "1", active: true },
    failOn: "warning",
    inventory: empty,
    leftovers: { options: [], tables: [], cronHooks: [], files: [] },
    uninstall: "none",
    surfaces: ["index", "users"].map((p) => ({ id: `admin-screen:/wp-admin/${p}.php`, kind: "admin-screen" as const, target: `/wp-admin/${p}.php`, actor: "admin", durationMs: 1 })),
    findings: raw,
  });
  assert.equal(report.status, "failed");
  assert.deepEqual(report.findings.map((f) => [f.kind, f.occurrences, f.surfaces]), [["admin-notice", 2, ["admin-screen:/wp-admin/index.php", "admin-screen:/wp-admin/users.php"]]]);
  assert.deepEqual(report.surfaces.map((s) => s.status), ["failed", "failed"]);
});

test("editorOf tells the block editor from the classic one", () => {
  const rows: [string, "block" | "classic" | undefined][] = [
    ['<body class="wp-admin wp-core-ui block-editor-page is-fullscreen-mode">', "block"],
    ['<body class="wp-admin post-new-php"><form id="post"><div id="postdivrich" class="postarea">', "classic"],
    ['<body class="wp-admin"><div id="post-body" class="metabox-holder">', "classic"],
    ["<p>Sorry, you are not allowed to access this page.</p>", undefined],
  ];
  for (const [html, expected] of rows) assert.equal(editorOf(html), expected, html);
});

test("creditProblems: a row goes to the surface its request tag names, whatever order requests overlapped in; the rest to the fallback", () => {
  const row = (message: string, extra: Partial<RecordedProblem>): RecordedProblem => ({ level: "warning", message, ...extra });
  const surfaces = ["front-end:front-page:anonymous", "front-end:front-page:subscriber", "admin-screen:/wp-admin/index.php"];
  const cases: { name: string; rows: RecordedProblem[]; want: Record<string, string[]> }[] = [
    {
      name: "two screens of the same URL, rows interleaved",
      rows: [row("a1", { uri: "/", request: surfaces[0] }), row("s1", { uri: "/", request: surfaces[1] }), row("a2", { uri: "/", request: surfaces[0] })],
      want: { [surfaces[0]!]: ["a1", "a2"], [surfaces[1]!]: ["s1"] },
    },
    {
      name: "WP-Cron spawned by a page, finished after the next page: still that page's",
      rows: [row("dash", { uri: "/wp-admin/index.php", request: surfaces[2] }), row("cron", { uri: "/wp-cron.php?doing_wp_cron=1", request: surfaces[0] })],
      want: { [surfaces[2]!]: ["dash"], [surfaces[0]!]: ["cron"] },
    },
    {
      name: "run-php work, an untagged request and a tag of other work go to the fallback",
      rows: [row("cli", { uri: "cli" }), row("untagged", { uri: "/?p=5" }), row("other", { uri: "/wp-admin/", request: "inventory-before" })],
      want: { fallback: ["cli", "untagged", "other"] },
    },
  ];
  for (const c of cases) {
    const credited = creditProblems(c.rows, surfaces, () => "fallback");
    assert.deepEqual(Object.fromEntries([...credited].map(([k, v]) => [k, v.map((r) => r.message)])), c.want, c.name);
  }
});
