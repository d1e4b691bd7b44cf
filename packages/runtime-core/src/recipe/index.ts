export { RECIPE_EXPECT_SCHEMA, RECIPE_JSON_EXPECTATION_SCHEMA, RECIPE_MOUNT_SCHEMA, RECIPE_STEP_SCHEMA, type RecipeExpect, type RecipeJsonExpectation, type RecipeMount, type RecipeStep, WORKSPACE_RECIPE_SCHEMA, WORKSPACE_RECIPE_SCHEMA_ID, type WorkspaceRecipe } from "./recipe-schema.js";
export { checkExpectations, type ExpectationCheck, parseJsonPath, readJsonPath } from "./recipe-expectations.js";
export { formatRecipeIssues, invalidRecipeError, type PlannedCapability, type PlannedRecipeStep, planRecipe, readRecipeFile, recipeArgsToFlat, type RecipeCheckOptions, type RecipePlan, type RecipeValidation, validateRecipe } from "./validate-recipe.js";
export { runRecipeSteps, RECIPE_REPORT_SCHEMA_ID } from "./run-recipe.js";
export type { RecipeReport, RecipeStepReport, RecipeSessionWork } from "./run-recipe.js";
