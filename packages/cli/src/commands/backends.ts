/**
 * `--backend playground|native`: the backend a CLI command boots its sandboxes with. The native
 * backend boots the same WordPress trees as Playground (bundled builds, mirror releases, your own
 * build), resolved by the Playground package's `resolveWordPressTree`.
 */
import { WpCodeboxError } from "@wp-codebox/runtime-core";
import { createNamedBackend, type BackendOptions } from "@wp-codebox/batch/task-backend";

export type { BackendOptions };

/**
 * Creates the backend `name` names (default `playground`); batch tasks use the same factory.
 * @throws `invalid-argument` for a name that is not in `BACKEND_NAMES`.
 */
export const createBackend = createNamedBackend;

/**
 * What each CLI command needs that a backend other than Playground does not have yet: checked
 * before anything boots. Every CLI command runs on native (`mcp`, `serve`, `check`, the batch): none is listed.
 */
const NEEDS_PLAYGROUND: Record<string, string> = {
};

/**
 * Refuses, before boot, a CLI command the named backend cannot run (none on native now: the list
 * above is empty).
 * @param cli - the CLI command (`"serve"`, `"check"`, …).
 * @throws `invalid-argument` for an unknown backend name; `backend-unsupported` (exit 2) naming the
 *   backend and what is missing.
 */
export function assertCliBackend(cli: string, name: string | undefined, options: BackendOptions): void {
  if (name === undefined || name === "playground") return;
  createBackend(name, options);
  const missing = NEEDS_PLAYGROUND[cli];
  if (missing === undefined) return;
  throw new WpCodeboxError("backend-unsupported", `wp-codebox ${cli} --backend ${name}: the ${name} backend cannot do what it needs yet: ${missing}. Use --backend playground (the default).`, { backend: name, command: cli, missing });
}
