/**
 * Refusing, before anything boots, what the chosen backend cannot run: the catalog commands and
 * observation types outside its `RuntimeBackend.supports`. One error names the backend and every
 * refused command or observation with where it came from.
 */
import { WpCodeboxError } from "./errors.js";
import type { BackendSupport } from "./runtime.js";

/** The part of a `RuntimeBackend` these checks read. */
export type BackendSupportSource = { kind?: string; supports?: BackendSupport };

/** One thing a run asks for, and where (`/command`, `/steps/2/action`, `/steps/3/observe`). */
export interface BackendNeed {
  pointer: string;
  command?: string;
  observation?: string;
}

/**
 * The needs a backend cannot meet (empty when it declares no `supports`, i.e. runs everything).
 */
export function unsupportedNeeds(backend: BackendSupportSource | undefined, needs: readonly BackendNeed[]): BackendNeed[] {
  const supports = backend?.supports;
  if (!supports) return [];
  return needs.filter((n) => (n.command !== undefined && !supports.commands.includes(n.command)) || (n.observation !== undefined && !supports.observations.includes(n.observation)));
}

/**
 * Throws unless the backend runs every command and observation in `needs`.
 * @throws WpCodeboxError `backend-unsupported` (exit 2): the message names the backend, each
 *   refused command or observation with its pointer, and what the backend runs;
 *   `data: { backend, unsupported: [{ pointer, command? , observation? }], supported: { commands, observations } }`.
 */
export function assertBackendSupports(backend: BackendSupportSource | undefined, needs: readonly BackendNeed[]): void {
  const refused = unsupportedNeeds(backend, needs);
  if (refused.length === 0) return;
  const supports = backend!.supports!;
  const named = refused.map((n) => `${n.command ?? `observation ${n.observation}`} (${n.pointer})`);
  throw new WpCodeboxError(
    "backend-unsupported",
    `The ${backend!.kind ?? "chosen"} backend cannot run ${named.join(", ")}: it runs ${supports.commands.join(", ") || "no commands"}${supports.observations.length ? ` and observes ${supports.observations.join(", ")}` : ""}. Use --backend playground, or leave ${refused.length === 1 ? "it" : "them"} out.`,
    { backend: backend!.kind ?? null, unsupported: refused.map((n) => ({ ...n })), supported: { commands: [...supports.commands], observations: [...supports.observations] } },
  );
}
