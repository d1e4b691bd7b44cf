/**
 * Integration: values are data, never code. Every hostile value goes through
 * every entry point that hands a value to PHP, and arrives byte-identical (compared by SHA-256 and
 * byte length computed inside PHP), while `blogname` stays unchanged, so nothing ran.
 * One real WordPress booted for the whole file.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createPlaygroundBackend, type PlaygroundRuntime } from "@wp-codebox/runtime-playground";

const fixtures = fileURLToPath(new URL("../../../test/fixtures/plugins/", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "wp-codebox-values-"));
const stubPhar = join(scratch, "wp-cli.phar");

const ONE_MIB = 1024 * 1024;
const chunk = "{${update_option('blogname','X')}} $HOME {$x} \\ \" ' ";
/** The hostile values, by name. */
const VALUES: Record<string, string> = {
  dollar: "$HOME",
  brace: "{$x}",
  exec: "{${update_option('blogname','X')}}",
  corpusTitle: "price $HOME {$x} {${strtoupper('x')}} \\ \"q\"",
  backslashes: "a\\b\\\\c\\'d\\\"e\\n\\0\\x41\\u{41}",
  quotes: "'single' \"double\" `back` ''' \"\"\"",
  nul: "before\0after",
  unicode: "KEKC博客 🧪 𝄞 \u{10FFFF} é",
  phpTags: "?><?php update_option('blogname','X'); ?>",
  big: (chunk.repeat(Math.ceil(ONE_MIB / chunk.length)) + "🧪").slice(0, ONE_MIB - 4) + "🧪",
};
const names = Object.keys(VALUES);
const envName = (i: number) => `HOSTILE_${i}`;

type Fingerprint = { sha256: string; bytes: number } | null;
const fingerprint = (value: string): Fingerprint => {
  const bytes = Buffer.from(value, "utf8");
  return { sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.length };
};

let runtime: PlaygroundRuntime;

before(async () => {
  // Stand-in for wp-cli.phar: prints the fingerprint of every argument it got.
  writeFileSync(stubPhar, `<?php\necho json_encode(array_map(static function ($a) { return ['sha256' => hash('sha256', $a), 'bytes' => strlen($a)]; }, array_slice($argv, 1)));\n`);
  const withoutNul = Object.entries(VALUES).filter(([, v]) => !v.includes("\0"));
  runtime = await createPlaygroundBackend().create({
    plugins: [join(fixtures, "value-echo")],
    env: Object.fromEntries(withoutNul.map(([name]) => [envName(names.indexOf(name)), VALUES[name]!])),
    // Prefixed, so that redacting the secrets leaves the plain values alone in other artifacts.
    secretEnv: Object.fromEntries(withoutNul.map(([name]) => [`SECRET_${envName(names.indexOf(name))}`, `secret:${VALUES[name]!}`])),
    siteOptions: Object.fromEntries(names.map((name, i) => [`hostile_option_${i}`, VALUES[name]!])),
    wpCliPhar: stubPhar,
  });
});

after(async () => {
  await runtime?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

const php = async (code: string, extra: string[] = []) => {
  const result = await runtime.execute({ command: "wordpress.run-php", args: [`code=${code}`, ...extra] });
  assert.equal(result.status, "ok", `${result.error?.message ?? ""} ${result.stderr}`);
  return result;
};

/** PHP that prints the fingerprint of a PHP expression. */
const fp = (expr: string) => `<?php $v = ${expr}; echo json_encode(is_string($v) ? ['sha256' => hash('sha256', $v), 'bytes' => strlen($v)] : null);`;

/** Runs a state export and returns its one section's data, as written into the bundle. */
async function exported<T>(request: Record<string, unknown>): Promise<T> {
  const observed = (await runtime.observe({ type: "wordpress-state", ...request })) as { artifactRefs: { path: string }[] };
  const file = (await runtime.collectArtifacts()).files.find((f) => f.path === observed.artifactRefs[0]!.path)!;
  return (JSON.parse(String(file.content)) as { data: T }).data;
}

/** Every entry point: sends `value` (named `name`, index `i`) and returns what PHP received. */
const ENTRY_POINTS: Record<string, { skip?: (value: string) => string | false; send: (value: string, i: number) => Promise<Fingerprint> }> = {
  "rest-request params-json": {
    send: async (value) => {
      const r = await runtime.execute({ command: "wordpress.rest-request", args: ["route=/test/v1/value", `params-json=${JSON.stringify({ value })}`] });
      assert.equal(r.status, "ok", r.error?.message);
      return (r.json as { data: { params: Record<string, Fingerprint> } }).data.params.value ?? null;
    },
  },
  "rest-request body-json": {
    send: async (value) => {
      const r = await runtime.execute({ command: "wordpress.rest-request", args: ["method=POST", "route=/test/v1/value", `body-json=${JSON.stringify({ value })}`] });
      assert.equal(r.status, "ok", r.error?.message);
      return (r.json as { data: { jsonValue: Fingerprint } }).data.jsonValue;
    },
  },
  "http-request body-json": {
    send: async (value) => {
      const r = await runtime.execute({ command: "wordpress.http-request", args: ["method=POST", "path=/wp-json/test/v1/value", `body-json=${JSON.stringify({ value })}`] });
      assert.equal(r.status, "ok", r.error?.message);
      return (r.json as { body: { jsonValue: Fingerprint } }).body.jsonValue;
    },
  },
  "http-request raw body": {
    send: async (value) => {
      const r = await runtime.execute({ command: "wordpress.http-request", args: ["method=POST", "path=/wp-json/test/v1/value", `headers-json=${JSON.stringify({ "content-type": "text/plain" })}`, `body=${value}`] });
      assert.equal(r.status, "ok", r.error?.message);
      return (r.json as { body: { raw: Fingerprint } }).body.raw;
    },
  },
  "http-request header": {
    // HTTP itself cannot carry these in a header field.
    skip: (value) => (value.includes("\0") ? "a NUL byte is not allowed in an HTTP header" : value.length > 64 * 1024 ? "headers are limited in size on every real server" : false),
    send: async (value) => {
      const r = await runtime.execute({ command: "wordpress.http-request", args: ["path=/wp-json/test/v1/value", `headers-json=${JSON.stringify({ "x-value": value })}`] });
      assert.equal(r.status, "ok", r.error?.message);
      return (r.json as { body: { header: Fingerprint } }).body.header;
    },
  },
  "--env value seen by run-php": {
    skip: (value) => (value.includes("\0") ? "no process environment holds NUL (refused before boot: see below)" : false),
    send: async (_value, i) => (await php(fp(`getenv('${envName(i)}')`))).json as Fingerprint,
  },
  "--env value seen by an HTTP request": {
    skip: (value) => (value.includes("\0") ? "no process environment holds NUL" : false),
    send: async (_value, i) => {
      const r = await runtime.execute({ command: "wordpress.http-request", args: [`path=/wp-json/test/v1/value?env=${envName(i)}`] });
      assert.equal(r.status, "ok", r.error?.message);
      return (r.json as { body: { env: Fingerprint } }).body.env;
    },
  },
  "--secret-env value": {
    skip: (value) => (value.includes("\0") ? "no process environment holds NUL" : false),
    send: async (value, i) => {
      const got = (await php(fp(`getenv('SECRET_${envName(i)}')`))).json as Fingerprint;
      assert.deepEqual(got, fingerprint(`secret:${value}`));
      return fingerprint(value);
    },
  },
  "site option": {
    send: async (_value, i) => (await php(fp(`get_option('hostile_option_${i}')`))).json as Fingerprint,
  },
  "wp-cli argument": {
    send: async (value) => {
      const quoted = `"${value.replace(/[\\"]/g, (m) => `\\${m}`)}"`;
      const r = await runtime.execute({ command: "wordpress.wp-cli", args: [`command=eval ${quoted}`] });
      assert.equal(r.status, "ok", r.error?.message);
      return (r.json as Fingerprint[])[1]!;
    },
  },
  "as=user:<login>": {
    // user_login is a 60-character column on MySQL; SQLite would keep more, a real site would not.
    skip: (value) => (value.length > 60 ? "longer than a WordPress user_login can be" : /[\0<>]/.test(value) ? "WordPress's login lookup strips tags and NUL (sanitize_user)" : false),
    send: async (value, i) => {
      // WordPress folds accents when it looks a login up (remove_accents); 4-byte characters pass.
      const login = value.replace(/é/g, "e");
      const b64 = Buffer.from(login, "utf8").toString("base64");
      await php(`<?php global $wpdb; $wpdb->insert($wpdb->users, ['user_login' => base64_decode('${b64}'), 'user_pass' => 'x', 'user_email' => 'hostile${i}@example.org', 'user_registered' => '2024-01-01 00:00:00', 'display_name' => 'h${i}']); echo $wpdb->insert_id;`);
      const r = await runtime.execute({ command: "wordpress.run-php", args: [`code=${fp("wp_get_current_user()->user_login")}`, `as=user:${login}`] });
      assert.equal(r.status, "ok", r.error?.message);
      assert.deepEqual(r.json, fingerprint(login));
      return fingerprint(value);
    },
  },
  "state-export option name": {
    skip: (value) => (value.length > 191 ? "longer than an option name can be" : false),
    send: async (value, i) => {
      const b64 = Buffer.from(value, "utf8").toString("base64");
      await php(`<?php update_option(base64_decode('${b64}'), 'marker-${i}');`);
      const options = await exported<Record<string, unknown>>({ sections: ["options"], optionNames: [value] });
      assert.deepEqual(Object.keys(options).map((k) => fingerprint(k)), [fingerprint(value)]);
      assert.equal(Object.values(options)[0], `marker-${i}`);
      return fingerprint(Object.keys(options)[0]!);
    },
  },
  "state-export user field": {
    skip: (value) => (value.length > 250 ? "longer than the display_name column (wpdb refuses it)" : false),
    send: async (value, i) => {
      const b64 = Buffer.from(value, "utf8").toString("base64");
      // Stored raw: wp_insert_user's display_name filters would change it before the export sees it.
      const id = Number((await php(`<?php global $wpdb; $id = wp_insert_user(['user_login' => 'fieldy${i}', 'user_pass' => 'x', 'user_email' => 'fieldy${i}@example.org']); $wpdb->update($wpdb->users, ['display_name' => base64_decode('${b64}')], ['ID' => $id]); clean_user_cache($id); echo $id;`)).stdout);
      const users = await exported<{ id: number; display_name: string }[]>({ sections: ["users"], userFields: ["display_name"], redaction: "none" });
      const user = users.find((u) => u.id === id)!;
      return fingerprint(user.display_name);
    },
  },
};

for (const [entry, { skip, send }] of Object.entries(ENTRY_POINTS)) {
  test(`hostile values arrive byte-identical through ${entry}`, async () => {
    for (const [i, name] of names.entries()) {
      const value = VALUES[name]!;
      const reason = skip?.(value);
      if (reason) continue;
      assert.deepEqual(await send(value, i), fingerprint(value), `${entry} / ${name}`);
    }
    assert.equal((await php("<?php echo get_option('blogname');")).stdout, "wp-codebox", `${entry}: nothing ran`);
  });
}

test("a REST POST stores a hostile post title verbatim and blogname is unchanged", async () => {
  const title = VALUES.corpusTitle! + " " + VALUES.exec!;
  const r = await runtime.execute({ command: "wordpress.rest-request", args: ["method=POST", "route=/wp/v2/posts", `body-json=${JSON.stringify({ title, status: "publish" })}`] });
  assert.equal(r.status, "ok", r.error?.message);
  const id = (r.json as { data: { id: number } }).data.id;
  assert.deepEqual((await php(fp(`get_post(${id})->post_title`))).json, fingerprint(title));
  // The same through real HTTP.
  const h = await runtime.execute({ command: "wordpress.http-request", args: ["method=POST", "path=/wp-json/wp/v2/posts", `body-json=${JSON.stringify({ title, status: "draft" })}`] });
  assert.equal(h.status, "ok", h.error?.message);
  assert.deepEqual((await php(fp(`get_post(${(h.json as { body: { id: number } }).body.id})->post_title`))).json, fingerprint(title));
  assert.equal((await php("<?php echo get_option('blogname');")).stdout, "wp-codebox");
});

test("as=user: of a login that does not exist, however hostile, is invalid-argument and runs nothing", async () => {
  await assert.rejects(
    runtime.execute({ command: "wordpress.run-php", args: ["code=<?php echo 1;", `as=user:nobody ${VALUES.exec}`] }),
    (e: Error & { code?: string }) => e.code === "invalid-argument" && /no such WordPress user/.test(e.message),
  );
  assert.equal((await php("<?php echo get_option('blogname');")).stdout, "wp-codebox");
});

test("a policy that allows only rest-request never runs PHP through a value", async () => {
  const restOnly = await createPlaygroundBackend().create({ policy: { commands: ["wordpress.rest-request"] }, siteOptions: { blogname: "untouched" } });
  try {
    const r = await restOnly.execute({
      command: "wordpress.rest-request",
      args: ["method=POST", "route=/wp/v2/posts", `body-json=${JSON.stringify({ title: VALUES.exec, status: "publish" })}`, `params-json=${JSON.stringify({ [VALUES.exec!]: VALUES.exec })}`],
    });
    assert.equal(r.status, "ok", r.error?.message);
    const settings = await restOnly.execute({ command: "wordpress.rest-request", args: ["route=/wp/v2/settings"] });
    assert.equal((settings.json as { data: { title: string } }).data.title, "untouched");
  } finally {
    await restOnly.dispose();
  }
});

test("values PHP cannot receive unchanged are refused before boot, naming the value", async () => {
  const backend = createPlaygroundBackend();
  await assert.rejects(backend.create({ env: { NOTE: "a\0b" } }), (e: Error & { code?: string }) => e.code === "invalid-argument" && /--env NOTE: .*NUL/.test(e.message));
  await assert.rejects(backend.create({ env: { NOTE: "a\ud800" } }), (e: Error & { code?: string }) => e.code === "invalid-argument" && /lone UTF-16 surrogate/.test(e.message));
  await assert.rejects(
    runtime.execute({ command: "wordpress.rest-request", args: ["route=/test/v1/value", `params-json={"value":"\\ud800"}`] }),
    (e: Error & { code?: string }) => e.code === "invalid-argument" && /rest-request at \/params\/value contains a lone UTF-16 surrogate/.test(e.message),
  );
});
