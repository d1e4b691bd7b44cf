import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { existsSync } from "node:fs";
import { WpCodeboxError } from "@wp-codebox/runtime-core";

const require = createRequire(import.meta.url);

/**
 * Path of the SQLite database integration plugin zip that ships inside `@wp-playground/cli`.
 * @throws `wordpress-build-missing` when the package is not installed.
 */
export function sqliteIntegrationZipPath(): string {
  let dir: string;
  try {
    dir = dirname(require.resolve("@wp-playground/cli/package.json"));
  } catch {
    throw new WpCodeboxError("wordpress-build-missing", "@wp-playground/cli is not installed; run `npm install`.");
  }
  const zip = join(dir, "sqlite-database-integration.zip");
  if (!existsSync(zip)) throw new WpCodeboxError("wordpress-build-missing", `The SQLite integration plugin is missing at ${zip}; reinstall with \`npm ci\`.`);
  return zip;
}
