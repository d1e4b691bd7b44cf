/**
 * The child process of the `process` executor: receives `{ type: "run", task, root, fresh }` over
 * IPC, runs the task with `runTaskToBundle` on this process's lane (its long-lived sandbox; a
 * sandbox of its own when `fresh`) and answers `{ type: "result" | "error", …, maxRssBytes }`.
 * It exits when its parent disconnects (also when the parent was SIGKILLed), disposing the lane's
 * sandbox, so a killed worker leaves no sandbox behind.
 */
import { serializeError } from "@wp-codebox/runtime-core";
import { SandboxLane } from "./lane.js";
import { runTaskToBundle } from "./run-task.js";
import type { ResolvedTask } from "./task-file.js";

const maxRssBytes = () => process.resourceUsage().maxRSS * 1024;

const lane = new SandboxLane();
/** Longest wait (ms) for the lane's sandbox to dispose before the child exits anyway. */
const DISPOSE_GRACE_MS = 3000;

process.on("disconnect", () => {
  // Exit handlers remove sandbox folders a slow dispose leaves behind.
  setTimeout(() => process.exit(0), DISPOSE_GRACE_MS).unref();
  void lane.discard().finally(() => process.exit(0));
});
process.on("message", (message: { type: string; task: ResolvedTask; root: string; fresh?: boolean }) => {
  if (message?.type !== "run") return;
  runTaskToBundle(message.task, { root: message.root, ...(message.fresh ? {} : { lane }) }).then(
    (result) => process.send?.({ type: "result", result, maxRssBytes: maxRssBytes() }),
    (error: unknown) => process.send?.({ type: "error", error: serializeError(error), maxRssBytes: maxRssBytes() }),
  );
});
