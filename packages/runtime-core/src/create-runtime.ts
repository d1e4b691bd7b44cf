/**
 * `createRuntime`: the backend-agnostic entry point (SPEC §5 Node API).
 */
import type { Runtime, RuntimeBackend, RuntimeCreateSpec } from "./runtime.js";

/**
 * Creates a sandbox with the given backend. It only delegates to `backend.create(spec)`; the
 * backend validates mounts, normalises the policy and boots WordPress.
 * @param spec - WordPress/PHP versions, mounts, policy, env, secret env, site options.
 * @param backend - e.g. `createPlaygroundBackend()` from `@wp-codebox/runtime-playground`.
 * @returns the live runtime; call `dispose()` when done.
 * @throws whatever the backend throws (e.g. `mount-source-missing`, `wordpress-version-unavailable`, `boot-failed`).
 * @example const runtime = await createRuntime({ php: "8.3" }, createPlaygroundBackend());
 */
export function createRuntime(spec: RuntimeCreateSpec, backend: RuntimeBackend): Promise<Runtime> {
  return backend.create(spec);
}
