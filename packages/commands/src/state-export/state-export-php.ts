/**
 * The PHP script that reads WordPress state inside the sandbox for `wp-codebox/wordpress-state-export/v1`.
 * It prints one JSON object `{ sections: { <section>: data }, abilitiesAvailable }`; the section
 * data has exactly the fields of the state-export schemas (checked before anything is written).
 * The program itself is `assets/state-export/export.php`.
 */
import type { WordPressStateConfig } from "@wp-codebox/runtime-core";
import { phpProgram } from "../php-source/php-assets.js";
import { phpValue } from "../php-source/php-value.js";

/** Builds the export script for a normalised config (`assets/state-export/export.php`). */
export function stateExportPhp(config: WordPressStateConfig): string {
  return phpProgram({ wp_codebox_state_config: phpValue(config, "state-export request") }, "state-export/export.php");
}
