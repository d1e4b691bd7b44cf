/** `wordpress.rest-request`: in-process REST dispatch (`rest_do_request`), no HTTP involved. */
import { WpCodeboxError, readJsonArg } from "@wp-codebox/runtime-core";
import { httpStatusOutcome } from "./http-request.js";
import { outcomeFromRun, phpWrapper } from "./run-php.js";
import type { CommandHandler } from "./command-context.js";
import { phpProgram } from "../php-source/php-assets.js";
import { phpValue } from "../php-source/php-value.js";

export const restRequest: CommandHandler = async (ctx, args) => {
  const method = (args.method ?? "GET").toUpperCase();
  const route = args.route;
  if (!route || !route.startsWith("/")) {
    throw new WpCodeboxError("invalid-argument", `route must be a REST route starting with "/", e.g. route=/wp/v2/posts (got "${route ?? ""}").`);
  }
  const params = args["params-json"] !== undefined ? readJsonArg(args["params-json"], ctx.cwd) : {};
  const body = args["body-json"] !== undefined ? readJsonArg(args["body-json"], ctx.cwd) : undefined;
  if (params === null || typeof params !== "object" || Array.isArray(params)) {
    throw new WpCodeboxError("invalid-json-arg", "params-json must be a JSON object of query parameters.");
  }
  const user = await ctx.wrapperUser(args.as);
  const request = { method, route, params, body: body ?? null };
  const file = "/internal/wp-codebox/code/rest-request.php";
  await ctx.writeSandboxFile(file, phpProgram({ wp_codebox_rest: phpValue(request, "rest-request") }, "commands/rest-request.php"));
  const outcome = outcomeFromRun(await ctx.runPhp(phpWrapper(file, { bootstrap: "wordpress", user })));
  if (outcome.status !== "ok") return outcome;
  const json = outcome.json as { status: number } | undefined;
  if (!json || typeof json.status !== "number") {
    return { ...outcome, status: "error", exitCode: 1, error: { code: "php-error", message: "The REST dispatch printed something other than its JSON result; a plugin may echo output during REST requests." } };
  }
  const verdict = httpStatusOutcome(json.status, args["expect-status"]);
  return verdict.ok
    ? outcome
    : { ...outcome, status: "error", exitCode: 1, error: { code: "http-error", message: `${method} ${route}: ${verdict.message}.`, data: { status: json.status } } };
};
