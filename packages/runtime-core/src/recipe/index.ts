export * from "./recipe-schema.js";
export * from "./recipe-expectations.js";
export * from "./validate-recipe.js";
export { runRecipe, RECIPE_REPORT_SCHEMA_ID } from "./run-recipe.js";
export type { RecipeReport, RecipeStepReport, RecipeRunOutcome, RunRecipeOptions } from "./run-recipe.js";
