/**
 * Unit: which PHP extensions a sandbox may load (read from the installed php-wasm build, nothing
 * booted), the default, refusals with the list, and the hint a missing-extension fatal carries.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SUPPORTED_PHP_VERSIONS, availablePhpExtensions, createPlaygroundBackend, resolvePhpExtensions } from "@wp-codebox/runtime-playground";
import { missingExtensionHint } from "@wp-codebox/commands";

test("every supported PHP version ships intl; xdebug is never offered", () => {
  for (const php of SUPPORTED_PHP_VERSIONS) {
    const available = availablePhpExtensions(php);
    assert.ok(available.includes("intl"), `PHP ${php}: ${available.join(", ")}`);
    assert.ok(!available.includes("xdebug"), `PHP ${php}`);
    assert.deepEqual(available, [...available].sort());
  }
});

test("no request loads intl (the Playground CLI default); [] loads none; names are deduplicated", () => {
  assert.deepEqual(resolvePhpExtensions(undefined, "8.3"), ["intl"]);
  assert.deepEqual(resolvePhpExtensions([], "8.3"), []);
  assert.deepEqual(resolvePhpExtensions(["intl", "INTL"], "8.3"), ["intl"]);
});

test("an unknown extension is php-extension-unavailable (exit 2) naming it and listing what is available", () => {
  assert.throws(
    () => resolvePhpExtensions(["intl", "imagick", "xdebug"], "8.3"),
    (e: Error & { code?: string; data?: Record<string, unknown> }) =>
      e.code === "php-extension-unavailable" &&
      /imagick, xdebug are not available for PHP 8\.3 here\. Available: intl/.test(e.message) &&
      /xdebug is not offered/.test(e.message) &&
      (e.data?.available as string[]).includes("intl"),
  );
});

test("the backend's preflight refuses an unknown extension before anything boots", () => {
  assert.throws(() => createPlaygroundBackend().preflight!({ extensions: ["gd"] }), (e: Error & { code?: string }) => e.code === "php-extension-unavailable" && /gd is not available/.test(e.message));
  assert.doesNotThrow(() => createPlaygroundBackend().preflight!({ extensions: ["intl"] }));
});

test("a fatal about a class or function of an extension that is not loaded says how to load it", () => {
  assert.match(missingExtensionHint('Uncaught Error: Class "Collator" not found'), /The intl extension is not loaded: run with --php-extension intl/);
  assert.match(missingExtensionHint("Uncaught Error: Call to undefined function numfmt_create()"), /--php-extension intl/);
  assert.match(missingExtensionHint('Uncaught Error: Class "Redis" not found'), /--php-extension redis/);
  assert.equal(missingExtensionHint('Uncaught Error: Class "Collator" not found', ["intl"]), "");
  assert.equal(missingExtensionHint('Uncaught Error: Class "My\\Thing" not found'), "");
  assert.equal(missingExtensionHint("Uncaught Error: Call to undefined function corpus_boom()"), "");
});

test('"none" alone loads none; beside other names it is invalid-argument saying it cannot be combined', () => {
  assert.deepEqual(resolvePhpExtensions(["none"], "8.3"), []);
  assert.deepEqual(resolvePhpExtensions(["None", "none"], "8.3"), []);
  for (const requested of [["none", "intl"], ["intl", "none"], ["none", "imagick"]]) {
    assert.throws(
      () => resolvePhpExtensions(requested, "8.3"),
      (e: Error & { code?: string; data?: Record<string, unknown> }) =>
        e.code === "invalid-argument" && /"none" \(load no extension\) cannot be combined with other extensions/.test(e.message) && !/not available/.test(e.message) && e.data?.option === "extensions",
      requested.join(","),
    );
  }
});
