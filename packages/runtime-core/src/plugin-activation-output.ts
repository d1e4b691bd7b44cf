/**
 * A `--plugin` input that printed while a sandbox's boot activated it. WordPress activates such a
 * plugin (activate_plugin() saves it as active, then answers `unexpected_output`), and its Plugins
 * screen warns about the characters printed; the boot does the same: the plugin stays active, the
 * progress says so, and the bundle records a `plugin-activation-output` event.
 */
export interface PluginActivationOutput {
  /** The plugin's folder (or single-file name) under `wp-content/plugins`. */
  plugin: string;
  /** What it printed, cut to its first 4 KB. */
  output: string;
  /** How many bytes it printed in all. */
  outputBytes: number;
}

/** The event type a backend records for each `PluginActivationOutput`. */
export const PLUGIN_ACTIVATION_OUTPUT_EVENT = "plugin-activation-output";

/**
 * The progress line about `printed`, in WordPress's words. It quotes none of the output: progress
 * goes to stderr unredacted, and a plugin may print a secret; the bundle's event (redacted like
 * every artifact) holds it.
 */
export function pluginActivationOutputNotice(printed: PluginActivationOutput): string {
  return `The plugin ${printed.plugin} generated ${printed.outputBytes} characters of unexpected output during activation; it is active, as WordPress leaves it (the output is in the bundle's ${PLUGIN_ACTIVATION_OUTPUT_EVENT} event)`;
}

/**
 * The `PluginActivationOutput`s among `values` (parsed JSON from an activation report), dropping
 * anything malformed. Never throws.
 */
export function pluginActivationOutputs(values: readonly unknown[]): PluginActivationOutput[] {
  const out: PluginActivationOutput[] = [];
  for (const value of values) {
    const v = value as Partial<PluginActivationOutput> | null;
    if (v && typeof v.plugin === "string" && typeof v.output === "string" && typeof v.outputBytes === "number") out.push({ plugin: v.plugin, output: v.output, outputBytes: v.outputBytes });
  }
  return out;
}
