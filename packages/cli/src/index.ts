/** Public API of @wp-codebox/cli: the CLI entry and the command handlers, callable without argv. */
export { runCli } from "./cli.js";
export type { RunCliOptions } from "./cli.js";
export type { CliIo } from "./cli-io.js";
export { processIo } from "./cli-io.js";
export { CliExitError, EXIT_CODES, describeFailure, sessionExitError } from "./cli-exit-error.js";
export { runCommand, prepareRun, executePreparedRun, toRunOutcome, newRunId } from "./commands/run.js";
export type { RunOptions, RunOutcome, PreparedRun } from "./commands/run.js";
export { runEpisode, formatEpisodeOutcome } from "./commands/episode-run.js";
export type { EpisodeRunOptions } from "./commands/episode-run.js";
export { listCommands, formatCommandCatalog } from "./commands/commands.js";
export { getSchema, SCHEMA_NAMES } from "./commands/schema.js";
export { verifyArtifacts, formatViolations } from "./commands/artifacts-verify.js";
export type { ArtifactsVerifyReport } from "./commands/artifacts-verify.js";
export { runDoctor, formatDoctorReport, DOCTOR_REPORT_SCHEMA_ID } from "./commands/doctor.js";
export type { DoctorCheck, DoctorReport, DoctorOptions } from "./commands/doctor.js";
export { validateRecipeFile, planRecipeFile, runRecipeFile, formatRecipePlan, formatRecipeRun } from "./commands/recipe-run.js";
export type { RecipeRunOptions, RecipeValidateReport } from "./commands/recipe-run.js";
