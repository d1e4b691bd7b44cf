/** Public API of @wp-codebox/mcp: wp-codebox as a Model Context Protocol server. */
export * from "./tool-schemas.js";
export * from "./mcp-sandbox.js";
export * from "./mcp-server.js";
export * from "./stdio.js";
export * from "./ability-tools.js";
export * from "./tool-output-schemas.js";
export * from "./mcp-resources.js";
