/**
 * Integration: the report pages, opened as a person opens them. One `wp-codebox batch` run writes
 * two real bundles (a recipe whose browser step passes and whose next browser step fails, and an
 * episode) and the batch page; each page is then opened in Chromium from file:// with the network
 * off and read for what a person sees. Also `wp-codebox report`. (The check's page is opened by
 * check.integration.test.ts, on the bundle that file already makes.)
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyArtifactBundle } from "@wp-codebox/runtime-core";
import { REPO_ROOT, spawnCli } from "./spawn-cli.js";
import { imagesLoaded, launchOfflineBrowser, type OfflineBrowser } from "../support/offline-page.js";

const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-report-page-"));
const out = join(scratch, "out");
const RUNTIME = { wp: "6.5", php: "8.3" };
let browser: OfflineBrowser;
let batch: Awaited<ReturnType<typeof spawnCli>>;

/** The tasks: each fact a page must show comes from a real run. */
function writeTasks(): string {
  const recipe = (name: string, body: Record<string, unknown>) => writeFileSync(join(scratch, `${name}.json`), JSON.stringify({ schema: "wp-codebox/workspace-recipe/v1", name, runtime: RUNTIME, ...body }));
  recipe("browser", {
    steps: [
      {
        name: "general settings load",
        command: "wordpress.browser-actions",
        args: { "step-timeout": "90s", steps: [{ kind: "navigate", url: "/wp-admin/options-general.php" }, { kind: "expect", selector: "#blogname", state: "visible" }, { kind: "screenshot", name: "general" }] },
        expect: { status: "ok" },
      },
      {
        name: "a widget that is not there",
        command: "wordpress.browser-actions",
        args: { "step-timeout": "90s", steps: [{ kind: "navigate", url: "/wp-admin/" }, { kind: "click", selector: "#no-such-widget", timeout: 1500 }] },
        expect: { status: "ok" },
      },
    ],
  });
  writeFileSync(
    join(scratch, "episode.json"),
    JSON.stringify({
      schema: "wp-codebox/episode-script/v1",
      runtime: RUNTIME,
      resetObservations: [{ type: "runtime-info" }],
      steps: [
        {
          name: "seed",
          action: { command: "wordpress.run-php", args: { code: "<?php update_option('blogname', 'Report page'); echo wp_insert_post(['post_title' => 'Seen on the page', 'post_status' => 'publish']);" } },
          observe: { type: "wordpress-state", sections: ["summary", "posts", "options"], optionNames: ["blogname"] },
        },
        { name: "checkpoint", snapshot: true },
      ],
    }),
  );
  const tasks = join(scratch, "tasks.jsonl");
  writeFileSync(tasks, ['{"id":"browser","recipe":"browser.json"}', '{"id":"episode","episode":"episode.json"}'].join("\n") + "\n");
  return tasks;
}

before(async () => {
  batch = await spawnCli(["batch", writeTasks(), "--artifacts", out, "--concurrency", "2"]);
  browser = await launchOfflineBrowser();
});

after(async () => {
  await browser?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const open = (file: string) => browser.open(file);

test("the batch wrote a page beside report.json, one row per task linking to each bundle's page", async () => {
  assert.equal(batch.code, 1, `one task fails on purpose\n${batch.stderr.slice(-3000)}`);
  const summary = batch.stderr.split("\n").filter((l) => !l.startsWith("error["));
  assert.equal(summary.filter(Boolean).at(-1), `page:   ${join(out, "report.html")}`, "the summary ends with the page");
  const { page, errors } = await open(join(out, "report.html"));
  const rows = await page.locator("table.tasks tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(0, 3).map((td) => td.textContent?.trim())));
  assert.deepEqual(rows, [["browser", "recipe", "failed"], ["episode", "episode", "passed"]]);
  for (const id of ["browser", "episode"]) {
    const href = await page.locator(`a:text-is("${id}")`).getAttribute("href");
    assert.equal(href, `${id}/report.html`);
    assert.ok(existsSync(join(out, id, "report.html")));
    assert.deepEqual((await verifyArtifactBundle(join(out, id))).violations, [], `${id} verifies with its page`);
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test("browser run and failed run: the step list, each step's screenshot and the failing step's screenshot load", async () => {
  const { page, errors } = await open(join(out, "browser", "report.html"));
  await assert.doesNotReject(page.locator("h1").filter({ hasText: "recipe browser" }).waitFor());
  const steps = await page.locator("table.steps tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(1, 5).map((td) => td.textContent?.trim())));
  assert.deepEqual(
    steps.map((s) => [s[0], s[1], s[3]]),
    [
      ["navigate", "", "ok"],
      ["expect", "#blogname", "ok"],
      ["screenshot", "", "ok"],
      ["navigate", "", "ok"],
      ["click", "#no-such-widget", "failed"],
    ],
  );
  assert.ok(await imagesLoaded(page, 'table.steps img[alt="screenshot general"]'), "the named screenshot loads");
  const failure = page.locator("table.steps tbody tr").filter({ hasText: "#no-such-widget" });
  assert.match((await failure.textContent()) ?? "", /#no-such-widget/);
  assert.ok(await imagesLoaded(page, 'table.steps tr:has-text("#no-such-widget") img'), "the failing step's screenshot loads");
  assert.match((await page.locator("#recipe").textContent()) ?? "", /a widget that is not there/);
  assert.deepEqual(errors, []);
  await page.screenshot({ path: join(scratch, "browser-report.png"), fullPage: false });
  if (process.env.WP_CODEBOX_DOCS_SCREENSHOTS === "1") {
    mkdirSync(join(REPO_ROOT, "docs/images"), { recursive: true });
    await page.setViewportSize({ width: 1280, height: 1700 });
    await page.screenshot({ path: join(REPO_ROOT, "docs/images/report-page.png"), fullPage: false });
  }
  await page.close();
});

test("episode: steps, the state observation as tables with its content hash, the snapshot", async () => {
  const { page, errors } = await open(join(out, "episode", "report.html"));
  const text = (await page.locator("#episode").textContent()) ?? "";
  assert.match(text, /wordpress\.run-php/);
  assert.match(text, /content hash [0-9a-f]{64}/);
  assert.match(text, /Report page/, "the option value from the state export");
  assert.match(text, /snapshot-\d+-[0-9a-f]+/);
  assert.ok(await page.locator("#episode h5", { hasText: "options" }).count());
  assert.deepEqual(errors, []);
  await page.close();
});

test("wp-codebox report DIR writes the page outside the bundle (which still verifies) and refuses inside it", async () => {
  const bundle = join(out, "browser");
  const pageFile = join(scratch, "pages", "browser.html");
  const made = await spawnCli(["report", bundle, "--out", pageFile]);
  assert.equal(made.code, 0, made.stderr);
  assert.ok(made.stderr.endsWith(`report:   ${pageFile}\n`), made.stderr);
  assert.deepEqual((await verifyArtifactBundle(bundle)).violations, []);
  const { page, errors } = await open(pageFile);
  assert.match((await page.locator("table.facts").textContent()) ?? "", /valid \(checked when this page was written\)/);
  assert.ok(await imagesLoaded(page, "table.steps img"), "screenshots resolve from the page's own folder");
  assert.deepEqual(errors, []);
  await page.close();

  const refused = await spawnCli(["report", bundle, "--out", join(bundle, "files", "page.html")]);
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /inside the bundle/);
  assert.deepEqual((await verifyArtifactBundle(bundle)).violations, []);
});
