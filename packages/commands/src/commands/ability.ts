/**
 * `wordpress.ability`: runs one registered ability (WordPress 6.9+ Abilities API) through
 * `wp_get_ability( name )->execute( input )`, and lists the registered abilities for the
 * `abilities` observation (what the MCP server makes tools of).
 */
import { ABILITIES_API_MIN_WORDPRESS, WpCodeboxError, checkAbilityName, isAbilityName, quoteValue, readJsonArg, schemaFromPhp, type AbilitiesObservation, type AbilityDescription } from "@wp-codebox/runtime-core";
import { outcomeFromRun, phpWrapper } from "./run-php.js";
import type { CommandContext, CommandHandler, CommandOutcome } from "./command-context.js";
import { phpProgram } from "../php-source/php-assets.js";
import { phpValue } from "../php-source/php-value.js";

const PROGRAM_FILE = "/internal/wp-codebox/code/ability.php";

/** What `assets/commands/ability.php` prints. */
type AbilityReport =
  | { available: false; wordpressVersion?: string }
  | { available: true; found: false; names: string[] }
  | { available: true; found: true; ok: true; output: unknown }
  | { available: true; found: true; ok: false; error: { code: string; message: string; data?: unknown } }
  | { available: true; abilities: AbilityDescription[] };

/** The `abilities-unavailable` error of a WordPress without the API. */
function unavailable(version: string | undefined): NonNullable<CommandOutcome["error"]> {
  return {
    code: "abilities-unavailable",
    message: `The Abilities API needs WordPress ${ABILITIES_API_MIN_WORDPRESS} or newer; this sandbox runs WordPress ${version ?? "(unknown)"}, where wp_get_ability() does not exist. Boot a newer WordPress: --wp ${ABILITIES_API_MIN_WORDPRESS} (or --wp latest).`,
    data: { wordpressVersion: version ?? null, requires: ABILITIES_API_MIN_WORDPRESS },
  };
}

/** Registered names a not-found message lists (the site decides how many there are). */
const LISTED_NAMES_MAX = 50;
/** Characters kept of texts the site supplies: an ability's label, a WP_Error message. */
const SITE_TEXT_MAX_CHARS = 500;
/** Characters kept of an ability's description (it becomes an MCP tool description). */
const DESCRIPTION_MAX_CHARS = 2000;

/** `text` cut to `max` characters, with an ellipsis when cut (text PHP printed is untrusted in size). */
const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);

export const ability: CommandHandler = async (ctx, args) => {
  const name = args.name!;
  // Validated before boot on the CLI and MCP; checked again for callers of the Node API.
  checkAbilityName(name);
  const input = args["input-json"] !== undefined ? readJsonArg(args["input-json"], ctx.cwd) : null;
  const user = await ctx.wrapperUser(args.as);
  await ctx.writeSandboxFile(PROGRAM_FILE, phpProgram({ wp_codebox_ability: phpValue({ name, input, list: false }, "ability") }, "commands/ability.php"));
  const outcome = outcomeFromRun(await ctx.runPhp(phpWrapper(PROGRAM_FILE, { bootstrap: "wordpress", user })));
  if (outcome.status !== "ok") return outcome;
  const report = outcome.json as AbilityReport | undefined;
  if (!report || typeof report !== "object" || typeof report.available !== "boolean") {
    return { ...outcome, status: "error", exitCode: 1, error: { code: "php-error", message: "The ability run printed something other than its JSON report; a plugin may echo output while WordPress loads or while the ability runs." } };
  }
  const failed = (error: NonNullable<CommandOutcome["error"]>): CommandOutcome => {
    const { json: _omit, ...rest } = outcome;
    return { ...rest, stdout: "", stdoutBytes: 0, status: "error", exitCode: 1, error };
  };
  if (!report.available) return failed(unavailable(report.wordpressVersion ?? ctx.info().wordpressVersion));
  if ("found" in report && !report.found) {
    return failed({
      code: "ability-not-found",
      message: `No ability named ${quoteValue(name)} is registered on this site. Registered: ${listedNames(report.names)}.`,
      data: { name, registered: report.names.slice(0, LISTED_NAMES_MAX).map((n) => cut(String(n), SITE_TEXT_MAX_CHARS)), registeredCount: report.names.length },
    });
  }
  if ("ok" in report && !report.ok) {
    return failed({
      code: "ability-failed",
      message: `${name} returned a WP_Error [${cut(String(report.error.code), SITE_TEXT_MAX_CHARS)}]: ${cut(String(report.error.message), SITE_TEXT_MAX_CHARS)}`,
      data: { name, code: report.error.code, message: report.error.message, ...(report.error.data !== null && report.error.data !== undefined ? { data: report.error.data } : {}) },
    });
  }
  const output = "output" in report ? report.output : null;
  // stdout is the output itself, so result.json is the ability's output (not the report around it).
  const stdout = JSON.stringify(output);
  return { ...outcome, stdout, stdoutBytes: Buffer.byteLength(stdout), json: output };
};

/** The registered names for a message: at most `LISTED_NAMES_MAX`, each quoted and cut, then how many more. */
function listedNames(names: readonly unknown[]): string {
  if (!names.length) return "(none)";
  const shown = names.slice(0, LISTED_NAMES_MAX).map((n) => quoteValue(String(n), 100));
  return names.length > LISTED_NAMES_MAX ? `${shown.join(", ")} and ${names.length - LISTED_NAMES_MAX} more` : shown.join(", ");
}

/**
 * The site's registered abilities with their schemas (the `abilities` observation), read as the
 * administrator. `available` is false, with no abilities, before WordPress 6.9. Names that are not
 * ability names this project runs (`isAbilityName`) are left out; labels are cut to 500 characters
 * and descriptions to 2,000.
 * @throws WpCodeboxError `php-error` when the listing fails or prints something else.
 */
export async function listAbilities(ctx: Pick<CommandContext, "runPhp" | "writeSandboxFile">): Promise<AbilitiesObservation> {
  await ctx.writeSandboxFile(PROGRAM_FILE, phpProgram({ wp_codebox_ability: phpValue({ name: "", input: null, list: true }, "ability") }, "commands/ability.php"));
  const outcome = outcomeFromRun(await ctx.runPhp(phpWrapper(PROGRAM_FILE, { bootstrap: "wordpress", user: "admin" })));
  const report = outcome.json as { available?: boolean; abilities?: AbilityDescription[] } | undefined;
  if (outcome.status !== "ok" || !report || typeof report.available !== "boolean") {
    throw new WpCodeboxError("php-error", `Listing the site's abilities failed: ${outcome.error ? `${outcome.error.code}: ${outcome.error.message}` : outcome.stdout.slice(0, 300) || "it printed nothing"}`);
  }
  // A site may register any name and any amount of text: names this project cannot run (see
  // `isAbilityName`) are left out, and labels and descriptions are cut.
  const abilities = (report.abilities ?? []).filter((a) => isAbilityName(String(a.name))).map((a) => ({
    name: String(a.name),
    label: cut(String(a.label), SITE_TEXT_MAX_CHARS),
    description: cut(String(a.description), DESCRIPTION_MAX_CHARS),
    inputSchema: schemaFromPhp(a.inputSchema),
    outputSchema: schemaFromPhp(a.outputSchema),
    annotations: a.annotations && typeof a.annotations === "object" && !Array.isArray(a.annotations) ? a.annotations : {},
  }));
  return { available: report.available, abilities };
}
