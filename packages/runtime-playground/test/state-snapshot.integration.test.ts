/**
 * Integration (one WordPress for the file): WordPress state export of every section with exactly
 * its declared fields, snapshots (capture, tamper → refused, restore into a fresh runtime), reset(),
 * and the unicode round trip: a site title with CJK characters and an emoji, set through run-php,
 * reads back byte for byte through run-php, state export, REST and the trace JSON.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import {
  WORDPRESS_STATE_SECTIONS,
  createRuntimeEpisode,
  readRuntimeSnapshotFromBundle,
  restoreRuntime,
  validateRuntimeEpisodeTrace,
  verifyArtifactBundle,
  writeArtifactBundle,
  type Runtime,
  type WordPressRuntimeSnapshot,
  type WordPressStateExport,
} from "@wp-codebox/runtime-core";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const backend = createPlaygroundBackend();
let runtime: PlaygroundRuntime;
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-state-"));
const TITLE = "KEKC博客 🧪";
let cleanTitle = "";

before(async () => {
  runtime = await backend.create({});
  cleanTitle = (await runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo get_option('blogname');"] })).stdout;
});
after(async () => {
  await runtime?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

const php = async (code: string) => {
  const r = await runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`] });
  assert.equal(r.status, "ok", `${r.error?.message ?? ""} ${r.stderr}`);
  return r;
};
const sectionFile = async (exported: WordPressStateExport, section: string) => {
  const artifacts = await runtime.collectArtifacts();
  const file = artifacts.files.find((f) => f.path === exported.artifacts[section]!.artifact)!;
  return JSON.parse(String(file.content)) as { schema: string; version: number; section: string; data: unknown };
};
const keys = (o: unknown) => Object.keys(o as object).sort();

test("state export: every section, exactly its declared fields, SHA-256 in data and refs", async () => {
  await php(`<?php
$cat = wp_insert_term('Recipes', 'category');
$post = wp_insert_post(['post_title' => 'State post', 'post_status' => 'publish', 'post_content' => 'secret body', 'post_category' => [$cat['term_id']]]);
$menu = wp_create_nav_menu('Main');
wp_update_nav_menu_item($menu, 0, ['menu-item-title' => 'Home', 'menu-item-url' => home_url('/'), 'menu-item-status' => 'publish']);
$att = wp_insert_attachment(['post_title' => 'Pic', 'post_mime_type' => 'image/png', 'post_status' => 'inherit'], 'pic.png', $post);
update_post_meta($att, '_wp_attachment_image_alt', 'A picture');
wp_insert_user(['user_login' => 'ed', 'user_pass' => 'pw-ed-123', 'role' => 'editor', 'display_name' => 'Ed Itor']);
echo json_encode(['ok' => true]);`);
  const observation = (await runtime.observe({ type: "wordpress-state", sections: [...WORDPRESS_STATE_SECTIONS], optionNames: ["blogname", "no_such_option"], userFields: ["roles", "caps"] })) as {
    type: string;
    data: WordPressStateExport;
    artifactRefs: { path: string; sha256: string; bytes: number; kind: string }[];
  };
  const data = observation.data;
  assert.equal(data.schema, "wp-codebox/wordpress-state-export/v1");
  assert.deepEqual(Object.keys(data.artifacts).sort(), [...WORDPRESS_STATE_SECTIONS].sort());
  for (const ref of observation.artifactRefs) {
    const section = ref.path.split("/").pop()!.replace(/\.json$/, "");
    assert.equal(data.artifacts[section]!.sha256, ref.sha256);
    assert.equal(data.artifacts[section]!.artifact, ref.path);
  }
  assert.deepEqual(keys(data.sections.summary), ["activePlugins", "activeTheme", "homeUrl", "postCounts", "siteUrl", "wordpressVersion"]);

  const posts = (await sectionFile(data, "posts")).data as Record<string, unknown>[];
  const post = posts.find((p) => p.title === "State post")!;
  assert.deepEqual(keys(post), ["contentHash", "id", "modifiedGmt", "slug", "status", "title", "type"]);
  assert.ok(!JSON.stringify(posts).includes("secret body"), "content only with includeContent");
  assert.deepEqual(posts.map((p) => p.id), [...posts.map((p) => p.id as number)].sort((a, b) => a - b));
  const terms = (await sectionFile(data, "terms")).data as Record<string, unknown>[];
  assert.deepEqual(keys(terms.find((t) => t.name === "Recipes")), ["count", "id", "name", "parent", "slug", "taxonomy"]);
  const menus = (await sectionFile(data, "menus")).data as { items: Record<string, unknown>[] }[];
  assert.deepEqual(keys(menus[0]), ["id", "items", "name", "slug"]);
  assert.deepEqual(keys(menus[0]!.items[0]), ["id", "object", "parentId", "title", "type", "url"]);
  const templates = (await sectionFile(data, "templates")).data as { templates: Record<string, unknown>[]; templateParts: Record<string, unknown>[]; globalStyles: Record<string, unknown> };
  assert.deepEqual(keys(templates), ["globalStyles", "templateParts", "templates", "theme"]);
  assert.deepEqual(keys(templates.templates[0]), ["contentHash", "id", "slug", "source", "theme", "type"]);
  assert.deepEqual(keys(templates.templateParts[0]), ["area", "contentHash", "id", "slug", "source", "theme"]);
  assert.match(String(templates.globalStyles.stylesheetHash), /^[0-9a-f]{64}$/);
  const media = (await sectionFile(data, "media")).data as Record<string, unknown>[];
  assert.deepEqual(keys(media[0]), ["altText", "id", "metadataHash", "mimeType", "slug", "sourceUrl", "status", "title"]);
  assert.equal(media[0]!.altText, "A picture");
  assert.deepEqual((await sectionFile(data, "options")).data, { blogname: cleanTitle, no_such_option: null });
  const users = (await sectionFile(data, "users")).data as Record<string, unknown>[];
  assert.deepEqual(keys(users[0]), ["caps", "id", "redacted", "roles"]);
  assert.ok(!JSON.stringify(users).includes("Ed Itor") && !JSON.stringify(users).includes("pw-ed-123"));
  const routes = (await sectionFile(data, "rest-routes")).data as { route: string }[];
  assert.ok(routes.some((r) => r.route === "/wp/v2/posts"));
  assert.deepEqual((await sectionFile(data, "abilities")).data, []);
  assert.equal((data.sections.abilities as { available: boolean }).available, false);
});

test("state export: includeContent adds bodies; identity user fields need redaction none", async () => {
  const full = (await runtime.observe({ type: "wordpress-state", sections: ["posts", "users"], includeContent: true, redaction: "none", userFields: ["user_login", "display_name"] })) as { data: WordPressStateExport };
  const posts = (await sectionFile(full.data, "posts")).data as { content?: string; title: string }[];
  assert.equal(posts.find((p) => p.title === "State post")?.content, "secret body");
  const users = (await sectionFile(full.data, "users")).data as Record<string, unknown>[];
  assert.deepEqual(users.find((u) => u.user_login === "ed"), { id: users.find((u) => u.user_login === "ed")!.id, redacted: false, user_login: "ed", display_name: "Ed Itor" });
  await assert.rejects(runtime.observe({ type: "wordpress-state", sections: ["users"], userFields: ["user_email"] }), { code: "invalid-state-request" });
  await assert.rejects(runtime.observe({ type: "wordpress-state", sections: ["nope"] }), { code: "invalid-state-request" });
});

test("wordpress.state-export command writes the sections as bundle files", async () => {
  const r = await runtime.execute({ command: "wordpress.state-export", args: ["sections=summary,options", "option-names=blogname"] });
  assert.equal(r.status, "ok");
  const data = r.json as WordPressStateExport;
  assert.deepEqual(Object.keys(data.artifacts), ["summary", "options"]);
  assert.ok(r.artifactRefs?.some((ref) => ref.path === data.artifacts.options!.artifact));
});

test("a unicode site title is byte-identical through run-php, state export, REST and the trace JSON", async () => {
  await php(`<?php update_option('blogname', '${TITLE}');`);
  assert.equal((await php("<?php echo get_option('blogname');")).stdout, TITLE);
  const rest = await runtime.execute({ command: "wordpress.rest-request", args: ["route=/"] });
  assert.equal((rest.json as { data: { name: string } }).data.name, TITLE);
  const state = (await runtime.observe({ type: "wordpress-state", sections: ["options"], optionNames: ["blogname"] })) as { data: WordPressStateExport };
  assert.deepEqual((await sectionFile(state.data, "options")).data, { blogname: TITLE });
  // Through an episode's trace, on this same runtime.
  const shared: Runtime = Object.assign(Object.create(runtime) as Runtime, { dispose: async () => undefined, reset: undefined });
  const episode = createRuntimeEpisode({}, { kind: "playground", create: async () => shared });
  await episode.reset();
  await episode.step({ command: "wordpress.run-php", args: ["code=<?php echo get_option('blogname');"] }, { type: "wordpress-state", sections: ["options"], optionNames: ["blogname"] });
  const bundle = await writeArtifactBundle(join(scratch, "unicode"), await episode.collectArtifacts());
  assert.equal((await verifyArtifactBundle(bundle.directory)).valid, true);
  const traceText = readFileSync(join(bundle.directory, "files/runtime-episode-trace.json"), "utf8");
  assert.ok(Buffer.from(traceText, "utf8").includes(Buffer.from(TITLE, "utf8")), "the UTF-8 bytes of the title are in the trace file");
  const trace = JSON.parse(traceText);
  assert.equal(trace.steps[0].execution.stdout, TITLE);
  assert.equal(validateRuntimeEpisodeTrace(trace).valid, true);
  await episode.close();
});

test("snapshot → mutate → restore into a fresh runtime reproduces the state; reset() discards changes", async () => {
  await php("<?php update_option('blogname', 'Before snapshot'); wp_insert_post(['post_title' => 'Kept', 'post_status' => 'publish']); @mkdir(WP_CONTENT_DIR . '/uploads'); file_put_contents(WP_CONTENT_DIR . '/uploads/note.txt', 'uploaded');");
  const snapshot = (await runtime.snapshot()) as WordPressRuntimeSnapshot;
  assert.equal(snapshot.semantics, "runtime-state-artifact");
  assert.equal(snapshot.schema, "wp-codebox/wordpress-runtime-snapshot/v1");
  assert.ok(snapshot.database.tables.some((t) => t.name === "wp_posts" && t.rows > 0));
  assert.ok(snapshot.files.some((f) => f.path === "wp-content/uploads/note.txt"));
  const stateOf = (rt: Runtime) =>
    rt.execute({ command: "wordpress.run-php", args: ["code=<?php echo json_encode([get_option('blogname'), get_page_by_title('Kept', OBJECT, 'post') ? 1 : 0, @file_get_contents(WP_CONTENT_DIR . '/uploads/note.txt')]);"] }).then((r) => r.json);
  const before = await stateOf(runtime);
  assert.deepEqual(before, ["Before snapshot", 1, "uploaded"]);

  await php("<?php update_option('blogname', 'Mutated'); unlink(WP_CONTENT_DIR . '/uploads/note.txt');");
  // Through a bundle and back, then into a fresh runtime.
  const artifacts = await runtime.collectArtifacts({ includeRuntimeSnapshotBundles: true });
  const bundle = await writeArtifactBundle(join(scratch, "snap"), artifacts);
  const manifest = JSON.parse(readFileSync(join(bundle.directory, "files/runtime-reference-manifest.json"), "utf8"));
  assert.equal(manifest.snapshots[0].replay.status, "runtime-state-artifact");
  const loaded = await readRuntimeSnapshotFromBundle(bundle.directory, snapshot.id);
  const restored = await restoreRuntime(loaded, backend, {});
  try {
    assert.deepEqual(await stateOf(restored), before);
  } finally {
    await restored.dispose();
  }

  // Tampered: one byte of the database → refused before anything boots.
  const db = loaded.files.find((f) => f.kind === "runtime-snapshot-database")!;
  const tampered = { ...loaded, files: loaded.files.map((f) => (f === db ? { ...f, content: Uint8Array.from(f.content!, (b, i) => (i === 100 ? b ^ 1 : b)) } : f)) };
  await assert.rejects(restoreRuntime(tampered, backend, {}), { code: "snapshot-tampered" });
  await assert.rejects(restoreRuntime({ ...loaded, activeTheme: "other" }, backend, {}), { code: "snapshot-tampered" });

  // reset(): back to the state right after boot (its speed is measured by bench/, not asserted).
  await runtime.reset();
  assert.deepEqual(await stateOf(runtime), [cleanTitle, 0, false]);
});
