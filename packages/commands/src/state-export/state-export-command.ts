/**
 * `wordpress.state-export`: the WordPress state export (`wp-codebox/wordpress-state-export/v1`)
 * as a command. Section artifacts go to `files/observations/state-export-<0001>/`.
 */
import { normalizeWordPressStateRequest, wordPressStateRequestFromArgs } from "@wp-codebox/runtime-core";
import type { CommandHandler } from "../commands/command-context.js";
import { exportWordPressState } from "./export-wordpress-state.js";

export const stateExport: CommandHandler = async (ctx, args) => {
  const config = normalizeWordPressStateRequest(wordPressStateRequestFromArgs(args));
  const exported = await exportWordPressState((code) => ctx.runPhp(code), config, { directory: ctx.nextArtifactDirectory("state-export"), secrets: ctx.secrets });
  const stdout = `${JSON.stringify(exported.data, null, 2)}\n`;
  return { status: "ok", exitCode: 0, stdout, stderr: "", json: exported.data, files: exported.files };
};
