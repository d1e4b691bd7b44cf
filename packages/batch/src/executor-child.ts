/**
 * The child process of the `process` executor: receives `{ type: "run", task, root }` over IPC,
 * runs the task with `runTaskToBundle` and answers `{ type: "result" | "error", …, maxRssBytes }`.
 * It exits when its parent disconnects (also when the parent was SIGKILLed), so a killed worker
 * leaves no sandbox behind.
 */
import { serializeError } from "@wp-codebox/runtime-core";
import { runTaskToBundle } from "./run-task.js";
import type { ResolvedTask } from "./task-file.js";

const maxRssBytes = () => process.resourceUsage().maxRSS * 1024;

process.on("disconnect", () => process.exit(0));
process.on("message", (message: { type: string; task: ResolvedTask; root: string }) => {
  if (message?.type !== "run") return;
  runTaskToBundle(message.task, { root: message.root }).then(
    (result) => process.send?.({ type: "result", result, maxRssBytes: maxRssBytes() }),
    (error: unknown) => process.send?.({ type: "error", error: serializeError(error), maxRssBytes: maxRssBytes() }),
  );
});
