/** Public API of @wp-codebox/mcp: wp-codebox as a Model Context Protocol server. */
export { argumentSchema, catalogToolCommands, commandForToolName, commandInputSchema, commandToolAnnotations, commandToolDescription, commandTools, type McpToolDescription, type ToolInputSchema, toolInputToArgs, toolNameForCommand } from "./tool-schemas.js";
export { type ArtifactRead, bundleDirectoryFor, type CollectedBundle, createMcpSandbox, type McpSandbox, type McpSandboxOptions, sessionFolderName } from "./mcp-sandbox.js";
export { createWpCodeboxMcpServer, episodeTools, type WpCodeboxMcpServerOptions } from "./mcp-server.js";
export { type McpStdioOutcome, serveMcpOverStdio, type ServeMcpOverStdioOptions } from "./stdio.js";
export { ABILITY_COMMAND, abilityCommandArgs, abilityForToolName, abilityInputFromArguments, abilityInputSchema, abilityTools, toolNameForAbility, WRAPPED_INPUT_PROPERTY } from "./ability-tools.js";
export { EPISODE_OUTPUT_SCHEMAS, REFUSAL_OUTPUT_SCHEMA, stepOutputSchema, type ToolOutputSchema } from "./tool-output-schemas.js";
export { listSessionResources, LOGIN_URL_RESOURCE, type McpResource, type McpResourceContent, readSessionResource, SITE_URL_RESOURCE } from "./mcp-resources.js";
