/**
 * This package's PHP programs (`assets/`, beside `src/` and `dist/`), with the shared command
 * assets of `@wp-codebox/commands` after them, so a program here can include the actor helpers.
 */
import { COMMAND_ASSETS_URL, phpAssets } from "@wp-codebox/commands";

/** `phpAsset(name)` / `phpProgram(vars, ...names)` over this package's assets, then the shared ones. */
export const { phpAsset, phpProgram } = phpAssets(new URL("../../assets/", import.meta.url), COMMAND_ASSETS_URL);
