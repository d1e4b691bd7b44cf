/**
 * Registers `wp-codebox recipe validate|plan|run` (handlers in `recipe-run.ts`, imported lazily).
 */
import type { Command } from "commander";
import type { CliIo } from "../cli-io.js";
import { addHostAccessOptions, hostAccessGrants, type HostAccessFlags } from "../host-access-flags.js";

/** What the recipe commands need from the CLI invocation. */
export interface RecipeCliContext {
  io: CliIo;
  /** Prints a `--json` document on stdout (and marks it emitted for the top-level catch). */
  printJson: (value: unknown) => void;
  /** Runs work with SIGINT/SIGTERM turned into an abort of the signal it gets. */
  withInterrupt: <T>(work: (interrupt: AbortSignal) => Promise<T>) => Promise<T>;
}

const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`;

/** Adds the `recipe` command group to `program`. */
export function registerRecipeCommands(program: Command, ctx: RecipeCliContext): void {
  const { io } = ctx;
  const recipe = program
    .command("recipe")
    .description("Validate, plan and run workspace recipes (wp-codebox/workspace-recipe/v1): one JSON file that replays a CI check or a bug report.")
    .addHelpText("after", examples(["wp-codebox recipe validate examples/recipes/plugin-smoke/recipe.json", "wp-codebox recipe plan examples/recipes/admin-browser/recipe.json", "wp-codebox recipe run examples/recipes/plugin-smoke/recipe.json --artifacts out"]));

  addHostAccessOptions(recipe
    .command("validate"), "the recipe")
    .description("Check a recipe without booting: every problem, each with a JSON pointer.")
    .argument("<file>", "recipe JSON file")
    .option("--json", 'print {"recipe", "valid", "issues": [{"path", "message"}]} on stdout')
    .addHelpText("after", "\nExit codes: 0 valid, 2 invalid (every problem listed as `pointer: message`)." + examples(["wp-codebox recipe validate recipe.json"]))
    .action(async (file: string, opts: { json?: boolean } & HostAccessFlags) => {
      const { validateRecipeFile, invalidRecipeExit } = await import("./recipe-run.js");
      const report = await validateRecipeFile(file, io.cwd, io.env, hostAccessGrants(opts));
      if (opts.json) ctx.printJson(report);
      if (!report.valid) throw invalidRecipeExit(report);
      if (!opts.json) io.stderr(`valid: ${report.recipe}\n`);
    });

  addHostAccessOptions(recipe
    .command("plan"), "the recipe")
    .description("Dry run: resolved inputs, the derived policy (auto-granted capabilities marked) and the ordered steps with resolved args. Boots nothing.")
    .argument("<file>", "recipe JSON file")
    .option("--json", "print the plan (wp-codebox/workspace-recipe-plan/v1) on stdout")
    .addHelpText("after", "\nExit codes: 0 planned, 2 invalid recipe." + examples(["wp-codebox recipe plan recipe.json", "wp-codebox recipe plan recipe.json --json | jq .capabilities"]))
    .action(async (file: string, opts: { json?: boolean } & HostAccessFlags) => {
      const { planRecipeFile, formatRecipePlan } = await import("./recipe-run.js");
      const plan = await planRecipeFile(file, io.cwd, io.env, hostAccessGrants(opts));
      if (opts.json) ctx.printJson(plan);
      else io.stdout(formatRecipePlan(plan));
    });

  addHostAccessOptions(recipe
    .command("run"), "the recipe")
    .description("Run a recipe in one fresh sandbox: setup, then steps, checking each step's expect; always writes the bundle. With runtime.matrix: once per (wp, php) cell, one bundle per cell plus matrix-summary.json.")
    .argument("<file>", "recipe JSON file")
    .option("--artifacts <dir>", "bundle directory (default: the recipe's artifacts.directory, else ./wp-codebox-artifacts/<run id>); refused if not empty")
    .option("--wp-cli-phar <path>", "wp-cli.phar for wordpress.wp-cli steps (default $WP_CODEBOX_WP_CLI_PHAR, then <cache>/wp-cli.phar)")
    .option("--clock <iso|real>", 'start the sandbox clock at this ISO-8601 instant (virtual: advances only with work done) or "real"; overrides runtime.clock')
    .option("--seed <n>", "seed every source of randomness (PHP and page Math.random); refused with outbound network; overrides runtime.seed")
    .option("--backend <name>", "playground (default) or native (Debian's PHP and a private MariaDB under bubblewrap; every catalog command); overrides runtime.backend")
    .option("--json", 'print {"report", "bundle": {"directory", "id", "valid"}, "error"?} on stdout')
    .option("--update-baselines", "browser scripts: write each compared screenshot as its baseline (the compare path, inside the script's folder) instead of comparing")
    .addHelpText(
      "after",
      "\nExit codes: 0 every expectation met; 1 a step failed its expectations (later steps skipped; files/recipe-report.json says which, with expected and actual); 2 invalid recipe; 3 environment (no browser, no WP-CLI)." +
        examples(["wp-codebox recipe run recipe.json", "API_TOKEN=... wp-codebox recipe run recipe.json --artifacts out --json"]),
    )
    .action(async (file: string, opts: { artifacts?: string; wpCliPhar?: string; clock?: string; seed?: string; backend?: string; json?: boolean; updateBaselines?: boolean } & HostAccessFlags) => {
      const { runRecipeFile, formatRecipeRun, recipeHasMatrix, runRecipeMatrixFile, formatRecipeMatrixRun, recipeMatrixExit } = await import("./recipe-run.js");
      const { sessionExitError } = await import("../cli-exit-error.js");
      // What a single recipe run and a matrix run both take from the command line.
      const recipeRunOptions = (interrupt: AbortSignal) => ({
        file,
        cwd: io.cwd,
        processEnv: io.env,
        interrupt,
        ...(opts.artifacts !== undefined ? { artifactsDir: opts.artifacts } : {}),
        ...(opts.wpCliPhar !== undefined ? { wpCliPhar: opts.wpCliPhar } : {}),
        ...(opts.updateBaselines === true ? { updateBaselines: true } : {}),
        ...(opts.clock !== undefined ? { clock: opts.clock } : {}),
        ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
        ...(opts.backend !== undefined ? { backendName: opts.backend } : {}),
        ...hostAccessGrants(opts),
        onProgress: (message: string) => io.stderr(`wp-codebox: ${message}\n`),
      });
      if (recipeHasMatrix(file, io.cwd)) {
        // runtime.matrix: one sandbox and one bundle per (wp, php) cell, then the summary table.
        const matrix = await ctx.withInterrupt((interrupt) =>
          runRecipeMatrixFile({
            ...recipeRunOptions(interrupt),
            onCell: (text) => io.stderr(text),
          }),
        );
        if (opts.json) ctx.printJson(matrix.summary);
        else io.stdout(formatRecipeMatrixRun(matrix));
        const matrixExit = recipeMatrixExit(matrix);
        if (matrixExit) throw matrixExit;
        return;
      }
      const outcome = await ctx.withInterrupt((interrupt) =>
        runRecipeFile({
          ...recipeRunOptions(interrupt),
        }),
      );
      const report = outcome.recipe!.report;
      if (opts.json) ctx.printJson({ report, bundle: outcome.bundle, ...(outcome.error ? { error: outcome.error } : {}) });
      else io.stderr(formatRecipeRun(outcome));
      const exit = sessionExitError(outcome, {
        code: "expectation-failed",
        message: `${report.failure?.message ?? "a step failed"}. See files/recipe-report.json in ${outcome.bundle.directory}.`,
      });
      if (exit) throw exit;
    });
}
