/** `inspect-mounted-inputs`: the resolved mounts, as the sandbox sees them. */
import type { CommandHandler } from "./command-context.js";

export const inspectMountedInputs: CommandHandler = async (ctx) => {
  const mounts = ctx.mounts.map((m) => ({ source: m.source, target: m.target, mode: m.mode, kind: m.kind, ...(m.metadata ? { metadata: m.metadata } : {}) }));
  const json = { mounts };
  return { status: "ok", exitCode: 0, stdout: `${JSON.stringify(json, null, 2)}\n`, stderr: "", json };
};
