export * from "./recipe-schema.js";
export * from "./recipe-expectations.js";
export * from "./validate-recipe.js";
export { runRecipeSteps, RECIPE_REPORT_SCHEMA_ID } from "./run-recipe.js";
export type { RecipeReport, RecipeStepReport, RecipeSessionWork } from "./run-recipe.js";
