/**
 * Unit: reading the PHPUnit configuration file for the core test library's multisite decision,
 * with PHPUnit 9.6's rules (an `<env>` does not replace a variable that is already set unless
 * `force="true"`; "true"/"false" values; the first `<const>` of a name wins), and where the file
 * is looked for.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { multisiteFromConfig, phpunitConfigCandidates, phpunitPhpSettings, readPhpunitConfig } from "../src/commands/phpunit-config.js";

const config = (php: string) =>
  `<?xml version="1.0"?>\n<!-- scaffolded -->\n<phpunit xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" bootstrap="tests/bootstrap.php" backupGlobals="false">\n  <php>\n    ${php}\n  </php>\n  <testsuites><testsuite name="all"><directory prefix="test-" suffix=".php">./tests/</directory></testsuite></testsuites>\n</phpunit>\n`;

test("multisite: the <env>/<const> of phpunit.xml against the host's WP_MULTISITE", () => {
  const cases: { name: string; xml: string | undefined; host: string | undefined; multisite: boolean; env: string | undefined }[] = [
    { name: "no configuration file, host unset", xml: undefined, host: undefined, multisite: false, env: undefined },
    { name: "no configuration file, host 1", xml: undefined, host: "1", multisite: true, env: "1" },
    { name: "a file without <php>", xml: config(""), host: undefined, multisite: false, env: undefined },
    { name: "env only", xml: config('<env name="WP_MULTISITE" value="1"/>'), host: undefined, multisite: true, env: "1" },
    { name: "env 0", xml: config('<env name="WP_MULTISITE" value="0"/>'), host: undefined, multisite: false, env: "0" },
    { name: "env true becomes 1 (PHPUnit converts it)", xml: config('<env name="WP_MULTISITE" value="TRUE"/>'), host: undefined, multisite: true, env: "1" },
    { name: "env true verbatim stays the word", xml: config('<env name="WP_MULTISITE" value="true" verbatim="true"/>'), host: undefined, multisite: false, env: "true" },
    { name: "env of another name", xml: config('<env name="WP_MULTISITE_X" value="1"/>'), host: undefined, multisite: false, env: undefined },
    { name: "const only", xml: config('<const name="WP_TESTS_MULTISITE" value="1"/>'), host: undefined, multisite: true, env: undefined },
    { name: "const true", xml: config('<const name="WP_TESTS_MULTISITE" value="true"/>'), host: undefined, multisite: true, env: undefined },
    { name: "const 0 is false in PHP", xml: config('<const name="WP_TESTS_MULTISITE" value="0"/>'), host: undefined, multisite: false, env: undefined },
    { name: "const false", xml: config('<const name="WP_TESTS_MULTISITE" value="false"/>'), host: undefined, multisite: false, env: undefined },
    { name: "const empty", xml: config('<const name="WP_TESTS_MULTISITE" value=""/>'), host: undefined, multisite: false, env: undefined },
    { name: "the first const of a name is defined", xml: config('<const name="WP_TESTS_MULTISITE" value="0"/><const name="WP_TESTS_MULTISITE" value="1"/>'), host: undefined, multisite: false, env: undefined },
    { name: "both, env 0 and const 1: the const suffices", xml: config('<env name="WP_MULTISITE" value="0"/><const name="WP_TESTS_MULTISITE" value="1"/>'), host: undefined, multisite: true, env: "0" },
    { name: "both say 1", xml: config('<env name="WP_MULTISITE" value="1"/><const name="WP_TESTS_MULTISITE" value="1"/>'), host: undefined, multisite: true, env: "1" },
    { name: "host 0 wins over env 1", xml: config('<env name="WP_MULTISITE" value="1"/>'), host: "0", multisite: false, env: "0" },
    { name: "host set but empty still wins", xml: config('<env name="WP_MULTISITE" value="1"/>'), host: "", multisite: false, env: "" },
    { name: "host 1 wins over env 0", xml: config('<env name="WP_MULTISITE" value="0"/>'), host: "1", multisite: true, env: "1" },
    { name: "force=true overrides host 0", xml: config('<env name="WP_MULTISITE" value="1" force="true"/>'), host: "0", multisite: true, env: "1" },
    { name: "force=true overrides host 1", xml: config('<env name="WP_MULTISITE" value="0" force="true"/>'), host: "1", multisite: false, env: "0" },
    { name: 'force="1" is not true for PHPUnit', xml: config('<env name="WP_MULTISITE" value="1" force="1"/>'), host: "0", multisite: false, env: "0" },
    { name: "host 0 does not hide the const", xml: config('<const name="WP_TESTS_MULTISITE" value="1"/>'), host: "0", multisite: true, env: "0" },
    { name: "a second env does not replace the first", xml: config('<env name="WP_MULTISITE" value="1"/><env name="WP_MULTISITE" value="0"/>'), host: undefined, multisite: true, env: "1" },
    { name: "a second forced env does", xml: config('<env name="WP_MULTISITE" value="1"/><env name="WP_MULTISITE" value="0" force="true"/>'), host: undefined, multisite: false, env: "0" },
    { name: "entities in values are decoded", xml: config('<env name="WP_MULTISITE" value="&#49;"/>'), host: undefined, multisite: true, env: "1" },
    { name: "a <php> that is not under the root is not PHPUnit's", xml: config('</php><groups><php><env name="WP_MULTISITE" value="1"/></php></groups><php>'), host: undefined, multisite: false, env: undefined },
    { name: "a comment that looks like an env is not one", xml: config('<!-- <env name="WP_MULTISITE" value="1"/> -->'), host: undefined, multisite: false, env: undefined },
    { name: "XML that is not well-formed is ignored (PHPUnit reports it)", xml: config('<env name="WP_MULTISITE" value="1">'), host: undefined, multisite: false, env: undefined },
  ];
  for (const c of cases) {
    assert.deepEqual(multisiteFromConfig(c.xml, c.host), { multisite: c.multisite, env: c.env }, c.name);
  }
});

test("phpunitPhpSettings: env and const entries in document order, other sections ignored", () => {
  const xml = config('<ini name="memory_limit" value="-1"/><env name="A" value="false"/><const name="B" value="False"/><server name="C" value="1"/><env name="D" value="x" force="TRUE"/>');
  assert.deepEqual(phpunitPhpSettings(xml), [
    { kind: "env", name: "A", value: "", force: false },
    { kind: "const", name: "B", value: false, force: false },
    { kind: "env", name: "D", value: "x", force: true },
  ]);
  assert.equal(phpunitPhpSettings("<phpunit><php>"), undefined);
  assert.equal(phpunitPhpSettings("not xml at all"), undefined);
});

test("the configuration file PHPUnit will use: config= (a file or a folder) or phpunit.xml, phpunit.dist.xml, phpunit.xml.dist", async () => {
  const plugin = "/wordpress/wp-content/plugins/p";
  assert.deepEqual(phpunitConfigCandidates(undefined, plugin), [`${plugin}/phpunit.xml`, `${plugin}/phpunit.dist.xml`, `${plugin}/phpunit.xml.dist`]);
  assert.deepEqual(phpunitConfigCandidates("tests/multisite.xml", plugin).at(-1), `${plugin}/tests/multisite.xml`);
  assert.deepEqual(phpunitConfigCandidates("/elsewhere/ms.xml", plugin).at(-1), "/elsewhere/ms.xml");

  const files: Record<string, string | "folder"> = {
    [`${plugin}/phpunit.xml.dist`]: "dist",
    [`${plugin}/tests`]: "folder",
    [`${plugin}/tests/phpunit.xml`]: "in tests",
    [`${plugin}/multisite.xml`]: "ms",
  };
  const read = async (path: string) => {
    const entry = files[path];
    if (entry === "folder") throw new Error("EISDIR");
    return entry === undefined ? null : new TextEncoder().encode(entry);
  };
  assert.equal(await readPhpunitConfig(read, undefined, plugin), "dist");
  assert.equal(await readPhpunitConfig(read, "multisite.xml", plugin), "ms");
  assert.equal(await readPhpunitConfig(read, "tests", plugin), "in tests");
  assert.equal(await readPhpunitConfig(read, "tests/", plugin), "in tests");
  assert.equal(await readPhpunitConfig(read, "missing.xml", plugin), undefined);
  files[`${plugin}/phpunit.xml`] = "local";
  assert.equal(await readPhpunitConfig(read, undefined, plugin), "local");
});
