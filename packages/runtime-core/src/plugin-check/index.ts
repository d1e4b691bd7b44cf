export * from "./plugin-check-report.js";
export * from "./plugin-check.js";
export * from "./core-screens.js";
