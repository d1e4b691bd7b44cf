/** Public API of @wp-codebox/batch: task files, the local pool, BullMQ submit/worker, reports. */
export { applyRuntimeOverrides, assertValidTaskFile, formatTaskFileIssues, type ResolvedTask, type TaskFileIssue, type TaskFileOptions, type TaskFileValidation, type TaskRuntimeOverrides, validateTaskFile, validateTaskLines } from "./task-file.js";
export { BATCH_STATE_DIR, bundleMatches, clearTask, findFinishedTask, isRetryableResult, planTask, type RunTaskOptions, runTaskToBundle, type TaskRecord, taskRuntimeKey, writeTaskRecord } from "./run-task.js";
export { DEFAULT_FINGERPRINT_LIMITS, type FingerprintLimits, isResumableFingerprint, taskFingerprint, type TaskFingerprintOptions, toolVersion, UNRESUMABLE_FINGERPRINT_PREFIX } from "./fingerprint.js";
export { createExecutor, DEFAULT_MAX_TASKS_PER_CHILD, type ExecutorOptions, failedResult, type Isolation, laneSlots, type TaskExecutor, type TaskStartHook } from "./executor.js";
export { type LaneSandbox, type LaneStats, runtimeKey, SandboxLane } from "./lane.js";
export { type BatchReportFiles, buildReport, formatReportSummary, renderJUnit, type ReportContext, writeReport, writeReportOrKeep, xmlEscape } from "./report.js";
export { type BatchProgress, createProgress, type ProgressOptions } from "./progress.js";
export { type CgroupLimits, type CgroupPaths, type ConcurrencyDecision, decideConcurrency, MEMORY_HEADROOM_BYTES, readCgroupLimits, type ResourceProbe, SANDBOX_MEMORY_BUDGET_BYTES } from "./resources.js";
export { type BatchCommonOptions, type BatchOutcome, cleanStaging, groupByRuntime, type LocalBatchOptions, prepareBatch, type PreparedBatch, resumeBatch, runLocalBatch } from "./local-batch.js";
export { assertQueueReachable, type BatchJobData, DEFAULT_QUEUE_NAME, parseQueueUrl, type QueueBatchOptions, type QueueTarget, type QueueWorker, type QueueWorkerOptions, startQueueWorker, submitQueueBatch } from "./queue.js";
export { type BackendOptions, createNamedBackend } from "./task-backend.js";
