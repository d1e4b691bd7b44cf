/** Public API of @wp-codebox/batch: task files, the local pool, BullMQ submit/worker, reports. */
export * from "./task-file.js";
export * from "./run-task.js";
export * from "./fingerprint.js";
export * from "./executor.js";
export * from "./lane.js";
export * from "./report.js";
export * from "./progress.js";
export * from "./resources.js";
export * from "./local-batch.js";
export * from "./queue.js";
