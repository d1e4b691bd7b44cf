/**
 * A recipe or episode script may only name host paths inside its own folder or a granted one, and
 * reach only granted network: every path-bearing field (mounts, plugins, themes, WordPress
 * sources, every catalog `path` argument and every `@file` argument) and every network rule, each
 * refused before anything is read or booted, without the refused file's bytes in the error.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { COMMAND_DEFINITIONS } from "../src/command-registry.js";
import { WpCodeboxError } from "../src/errors.js";
import { checkHostPath, networkAccessIssues, parseNetworkGrant, resolveHostAccess } from "../src/host-access.js";
import { planRecipe, validateRecipe } from "../src/recipe/validate-recipe.js";
import { planRun } from "../src/session/run-plan.js";
import type { NetworkPolicy } from "../src/runtime.js";

const SECRET = "TOPSECRET-4711";
const root = mkdtempSync(join(tmpdir(), "wp-codebox-host-access-"));
after(() => rmSync(root, { recursive: true, force: true }));
// The shared file's folder, and a sibling folder it must not reach.
const folder = join(root, "shared");
const outside = join(root, "private");
mkdirSync(folder);
mkdirSync(join(outside, "plugin"), { recursive: true });
writeFileSync(join(outside, "secret.txt"), SECRET);
writeFileSync(join(outside, "secret.php"), `<?php echo "${SECRET}";`);
writeFileSync(join(outside, "secret.json"), JSON.stringify({ secret: SECRET }));
writeFileSync(join(outside, "plugin", "plugin.php"), `<?php /* Plugin Name: ${SECRET} */`);
mkdirSync(join(folder, "mine"));
writeFileSync(join(folder, "mine", "mine.php"), "<?php /* Plugin Name: Mine */");
writeFileSync(join(folder, "probe.php"), "<?php echo 1;");
// Links inside the folder that lead out of it.
symlinkSync(join(outside, "secret.php"), join(folder, "link.php"));
symlinkSync(outside, join(folder, "link-dir"));
const recipePath = join(folder, "recipe.json");

const recipe = (extra: Record<string, unknown>) => ({ schema: "wp-codebox/workspace-recipe/v1", steps: [{ command: "wordpress.run-php", args: { code: "<?php echo 1;" } }], ...extra });
const step = (command: string, args: unknown) => ({ steps: [{ command, args }] });

/** The file an argument of `format` names outside the folder. */
const outsideFileFor = (format: string) => join(outside, format === "json" ? "secret.json" : format === "path" ? "secret.php" : "secret.txt");

/** Every catalog argument that names a host file: `path` ones as they are, `json` ones as `@file`. */
const fileArgs = COMMAND_DEFINITIONS.filter((d) => d.runnable).flatMap((d) =>
  d.args.filter((a) => a.format === "path" || a.format === "json").map((a) => ({ command: d.id, recipe: d.recipe, name: a.name, format: a.format })),
);

function expectRefused(run: () => unknown, code: string, pointer: string): WpCodeboxError {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof WpCodeboxError, `expected ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  const issues = caught.data.issues as { path: string; message: string }[];
  assert.ok(issues.some((i) => i.path === pointer && i.message.startsWith(`${code}:`)), `no ${code} at ${pointer}: ${caught.message}`);
  assert.ok(!JSON.stringify({ message: caught.message, data: caught.data }).includes(SECRET), "the refused file's bytes leaked");
  return caught;
}

describe("recipes: every path-bearing field stays in the recipe's folder unless granted", () => {
  const cases: { name: string; recipe: Record<string, unknown>; pointer: string; grant: string }[] = [
    { name: "inputs.mounts[].source", recipe: recipe({ inputs: { mounts: [{ source: outside, target: "/workspace/data" }] } }), pointer: "/inputs/mounts/0/source", grant: outside },
    { name: "inputs.mounts[].source, relative with ..", recipe: recipe({ inputs: { mounts: [{ source: "../private", target: "/workspace/data" }] } }), pointer: "/inputs/mounts/0/source", grant: outside },
    { name: "inputs.mounts[].source through a symlinked folder", recipe: recipe({ inputs: { mounts: [{ source: "./link-dir", target: "/workspace/data" }] } }), pointer: "/inputs/mounts/0/source", grant: outside },
    { name: "inputs.plugins[]", recipe: recipe({ inputs: { plugins: ["../private/plugin"] } }), pointer: "/inputs/plugins/0", grant: outside },
    { name: "inputs.themes[]", recipe: recipe({ inputs: { themes: [join(outside, "plugin")] } }), pointer: "/inputs/themes/0", grant: outside },
    { name: "text arg @file (code)", recipe: recipe(step("wordpress.run-php", { code: `@${join(outside, "secret.txt")}` })), pointer: "/steps/0/args/code", grant: outside },
    { name: "text arg @file through a symlink", recipe: recipe(step("wordpress.run-php", { code: "@./link.php" })), pointer: "/steps/0/args/code", grant: outside },
    { name: "raw string[] args", recipe: recipe(step("wordpress.run-php", [`code=@${join(outside, "secret.txt")}`])), pointer: "/steps/0/args/0", grant: outside },
    { name: "setup steps", recipe: recipe({ setup: [{ command: "wordpress.run-php", args: { "code-file": "./link.php" } }] }), pointer: "/setup/0/args/code-file", grant: outside },
    { name: "base name of a JSON arg (steps → steps-json)", recipe: recipe(step("wordpress.browser-actions", { steps: `@${join(outside, "secret.json")}` })), pointer: "/steps/0/args/steps", grant: outside },
    ...fileArgs
      .filter((a) => a.recipe)
      .map((a) => {
        const file = outsideFileFor(a.format);
        return { name: `${a.command} ${a.name} (${a.format})`, recipe: recipe(step(a.command, { [a.name]: a.format === "path" ? file : `@${file}` })), pointer: `/steps/0/args/${a.name}`, grant: outside };
      }),
  ];

  it("the table covers every catalog argument that names a host file", () => {
    assert.ok(fileArgs.some((a) => a.format === "path" && a.name === "code-file"));
    assert.ok(fileArgs.some((a) => a.format === "path" && a.name === "phpunit"));
    for (const a of fileArgs.filter((x) => x.recipe)) assert.ok(cases.some((c) => c.name.startsWith(`${a.command} ${a.name} `)), `${a.command} ${a.name}`);
  });

  for (const c of cases) {
    it(`${c.name}: refused (path-not-allowed), then allowed by --allow-path`, () => {
      const refused = validateRecipe(c.recipe, recipePath).issues.filter((i) => i.message.startsWith("path-not-allowed:"));
      assert.deepEqual(refused.map((i) => i.path), [c.pointer]);
      assert.match(refused[0]!.message, /--allow-path /);
      expectRefused(() => planRecipe(c.recipe, recipePath), "path-not-allowed", c.pointer);
      const granted = validateRecipe(c.recipe, recipePath, { allowPaths: [c.grant] }).issues;
      assert.deepEqual(granted.filter((i) => i.message.includes("path-not-allowed")), []);
    });
  }

  it('"code": "@/etc/shadow" is refused without reading it, and allowed only with --allow-path /etc', () => {
    const shadow = recipe(step("wordpress.run-php", { code: "@/etc/shadow" }));
    expectRefused(() => planRecipe(shadow, recipePath), "path-not-allowed", "/steps/0/args/code");
    const mounted = recipe({ inputs: { mounts: [{ source: "/etc/apt", target: "/workspace/apt" }] } });
    expectRefused(() => planRecipe(mounted, recipePath), "path-not-allowed", "/inputs/mounts/0/source");
    const plugin = recipe({ inputs: { plugins: ["/etc/shadow"] } });
    expectRefused(() => planRecipe(plugin, recipePath), "path-not-allowed", "/inputs/plugins/0");
    // Granted, the path check passes (reading /etc/shadow may still fail for a non-root user).
    const issues = validateRecipe(shadow, recipePath, { allowPaths: ["/etc"] }).issues;
    assert.ok(!issues.some((i) => i.message.includes("path-not-allowed")), JSON.stringify(issues));
  });

  it("paths inside the folder need no grant; the plan shows the folder, the grants and every widened path", () => {
    const inside = recipe({ inputs: { plugins: ["./mine"] }, steps: [{ command: "wordpress.run-php", args: { "code-file": "./probe.php" } }] });
    const plan = planRecipe(inside, recipePath);
    assert.deepEqual(plan.hostAccess.widened, []);
    assert.deepEqual(plan.hostAccess.allowPaths, []);
    const widened = planRecipe(recipe({ inputs: { plugins: ["./mine", "../private/plugin"] } }), recipePath, { allowPaths: [outside], allowNetwork: ["example.com"] });
    assert.deepEqual(widened.hostAccess.widened.map((w) => [w.pointer, w.allowedBy]), [["/inputs/plugins/1", widened.hostAccess.allowPaths[0]]]);
    assert.deepEqual(widened.hostAccess.allowNetwork, ["example.com"]);
  });

  it("a grant that does not exist is an input error", () => {
    assert.throws(() => validateRecipe(recipe({}), recipePath, { allowPaths: [join(root, "nowhere")] }), { code: "invalid-argument" });
  });
});

describe("episode scripts: every path-bearing field stays in the script's folder unless granted", () => {
  const script = (extra: Record<string, unknown>) => ({ schema: "wp-codebox/episode-script/v1", steps: [{ action: { command: "wordpress.run-php", args: { code: "<?php echo 1;" } } }], ...extra });
  const action = (command: string, args: unknown) => ({ steps: [{ action: { command, args } }] });
  const cases: { name: string; script: Record<string, unknown>; pointer: string }[] = [
    { name: "runtime.wordpress", script: script({ runtime: { wordpress: "../private" } }), pointer: "/runtime/wordpress" },
    { name: "mounts[].source", script: script({ mounts: [{ source: "./link-dir", target: "/workspace/data" }] }), pointer: "/mounts/0/source" },
    { name: "plugins[]", script: script({ plugins: [join(outside, "plugin")] }), pointer: "/plugins/0" },
    { name: "themes[]", script: script({ themes: ["../private/plugin"] }), pointer: "/themes/0" },
    { name: "raw string[] args", script: script(action("wordpress.run-php", [`code-file=${join(outside, "secret.php")}`])), pointer: "/steps/0/action/args/0" },
    ...fileArgs.map((a) => {
      const file = outsideFileFor(a.format);
      return { name: `${a.command} ${a.name} (${a.format})`, script: script(action(a.command, { [a.name]: a.format === "path" ? file : `@${file}` })), pointer: `/steps/0/action/args/${a.name}` };
    }),
  ];
  for (const c of cases) {
    it(`${c.name}: refused before anything is read, allowed by --allow-path`, () => {
      expectRefused(() => planRun({ kind: "episode", script: c.script, baseDir: folder }, { artifactsDir: join(root, "out-episode") }), "path-not-allowed", c.pointer);
      try {
        planRun({ kind: "episode", script: c.script, baseDir: folder }, { artifactsDir: join(root, "out-episode"), allowPaths: [outside] });
      } catch (error) {
        // Granted, only the script's other problems (a missing argument, a non-WordPress folder) remain.
        assert.ok(error instanceof WpCodeboxError && !error.message.includes("path-not-allowed"), String(error));
      }
    });
  }
});

describe("network: a file's policy can narrow the --allow-network grants, never widen them", () => {
  const table: { network: NetworkPolicy; grants: string[]; refused: string[] }[] = [
    { network: "deny", grants: [], refused: [] },
    { network: "allow", grants: [], refused: [""] },
    { network: "allow", grants: ["example.com"], refused: [""] },
    { network: "allow", grants: ["*"], refused: [] },
    { network: { allowHosts: ["a.com"] }, grants: [], refused: ["/allowHosts/0"] },
    { network: { allowHosts: ["a.com"] }, grants: ["a.com"], refused: [] },
    { network: { allowHosts: ["a.com"] }, grants: ["*.a.com"], refused: ["/allowHosts/0"] },
    { network: { allowHosts: ["x.a.com", "b.com"] }, grants: ["*.a.com"], refused: ["/allowHosts/1"] },
    { network: { allowHosts: ["*.a.com"] }, grants: ["a.com"], refused: ["/allowHosts/0"] },
    { network: { allowHosts: ["*.x.a.com"] }, grants: ["*.a.com"], refused: [] },
    { network: { allowHosts: ["127.0.0.1"] }, grants: ["http://127.0.0.1:8080"], refused: [] },
    { network: { allowHosts: ["127.0.0.1"] }, grants: ["localhost"], refused: ["/allowHosts/0"] },
    { network: { allowHosts: ["anything.example"] }, grants: ["*"], refused: [] },
    { network: { allowHosts: ["127.0.0.1"] }, grants: ["*.0.1"], refused: ["/allowHosts/0"] },
    { network: { allowHosts: ["*.0.0.1"] }, grants: ["*.0.1"], refused: ["/allowHosts/0"] },
  ];
  for (const row of table) {
    it(`${JSON.stringify(row.network)} with grants ${JSON.stringify(row.grants)}`, () => {
      // Grants the parser refuses (a wildcard on an IP) are fed raw: the coverage rule refuses them too.
      const access = { allowNetwork: row.grants.map((g) => { try { return parseNetworkGrant(g); } catch { return g; } }) };
      const issues = networkAccessIssues(row.network, access, "");
      assert.deepEqual(issues.map((i) => i.path), row.refused);
      for (const i of issues) assert.match(i.message, /^network-not-allowed: .*--allow-network/);
    });
  }

  it("grants parse as hosts; what is not a host or origin is an input error", () => {
    const ok: [string, string][] = [["*", "*"], ["Example.COM", "example.com"], ["*.example.com", "*.example.com"], ["127.0.0.1:8080", "127.0.0.1"], ["http://127.0.0.1:8080", "127.0.0.1"], ["https://[::1]:443/", "::1"], ["[::1]", "::1"]];
    for (const [text, host] of ok) assert.equal(parseNetworkGrant(text), host, text);
    for (const text of ["", "http://a.com/path", "http://a.com/?q=1", "a b", "*.", ".a.com", "http://user@a.com", "*.0.0.1", "*.1"]) assert.throws(() => parseNetworkGrant(text), { code: "invalid-argument" }, text);
  });

  it("a recipe or script with network: allow is refused (network-not-allowed) unless --allow-network '*' grants it", () => {
    const open = recipe({ policy: { network: "allow" } });
    expectRefused(() => planRecipe(open, recipePath), "network-not-allowed", "/policy/network");
    expectRefused(() => planRecipe(open, recipePath, { allowNetwork: ["127.0.0.1"] }), "network-not-allowed", "/policy/network");
    assert.equal(planRecipe(open, recipePath, { allowNetwork: ["*"] }).policy.network, "allow");
    const hosts = recipe({ policy: { network: { allowHosts: ["api.example.com"] } } });
    expectRefused(() => planRecipe(hosts, recipePath), "network-not-allowed", "/policy/network/allowHosts/0");
    assert.deepEqual(planRecipe(hosts, recipePath, { allowNetwork: ["*.example.com"] }).policy.network, { allowHosts: ["api.example.com"] });
    const script = { schema: "wp-codebox/episode-script/v1", policy: { network: "allow" }, runtime: { clock: "real" }, steps: [{ snapshot: true }] };
    expectRefused(() => planRun({ kind: "episode", script, baseDir: folder }, { artifactsDir: join(root, "out-net") }), "network-not-allowed", "/policy/network");
    const plan = planRun({ kind: "episode", script, baseDir: folder }, { artifactsDir: join(root, "out-net"), allowNetwork: ["*"] });
    assert.equal(plan.policy.network, "allow");
  });

  it("a path check follows symlinks of the folder itself", () => {
    const access = resolveHostAccess(join(folder, "link-dir"));
    assert.equal(checkHostPath(join(outside, "secret.txt"), access).allowed, true);
    assert.equal(checkHostPath(join(folder, "probe.php"), access).allowed, false);
  });
});

describe("recipes: screenshot baselines stay beside the browser script, whatever --allow-path grants", () => {
  const flow = (name: string, steps: unknown[]) => {
    writeFileSync(join(folder, name), JSON.stringify(steps));
    return recipe(step("wordpress.browser-actions", { "steps-json": `@${name}` }));
  };
  const shot = (compare: string) => [{ kind: "navigate", url: "/" }, { kind: "screenshot", compare }];
  const cases: { name: string; recipe: Record<string, unknown>; issue?: RegExp }[] = [
    { name: "a baseline beside the script file", recipe: flow("flow-ok.json", shot("baselines/home.png")) },
    { name: "a baseline outside the script's folder", recipe: flow("flow-out.json", shot("../private/home.png")), issue: /^path-not-allowed: baseline .*private\/home\.png is outside the script's folder/ },
    { name: "a baseline through a symlink out of the folder", recipe: flow("flow-link.json", shot("link-dir/home.png")), issue: /^path-not-allowed:/ },
    { name: "an inline script (no folder of its own)", recipe: recipe(step("wordpress.browser-actions", { steps: shot("home.png") })), issue: /compare needs the script in a file/ },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.issue ? "refused at /steps/0/args/…/1/compare" : "allowed"}`, () => {
      const issues = validateRecipe(c.recipe, recipePath, { allowPaths: [outside] }).issues;
      if (!c.issue) return assert.deepEqual(issues, []);
      assert.equal(issues.length, 1, JSON.stringify(issues));
      assert.match(issues[0]!.path, /^\/steps\/0\/args\/steps(-json)?\/1\/compare$/);
      assert.match(issues[0]!.message, c.issue);
    });
  }
});
