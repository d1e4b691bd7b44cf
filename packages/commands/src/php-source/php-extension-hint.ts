/**
 * "How to turn it on" hints for fatal errors that name a class or function of a PHP extension the
 * sandbox did not load.
 */

/** Classes and functions by the extension that defines them, for "how to turn it on" hints. */
const EXTENSION_SYMBOLS: [RegExp, string][] = [
  [/\b(Collator|NumberFormatter|IntlDateFormatter|IntlCalendar|IntlTimeZone|Normalizer|Locale|MessageFormatter|Transliterator|IntlChar|ResourceBundle|Spoofchecker|IntlBreakIterator|UConverter|grapheme_\w+|idn_to_(?:ascii|utf8)|numfmt_\w+|collator_\w+|normalizer_\w+|locale_\w+|transliterator_\w+|intl_\w+)\b/, "intl"],
  [/\bRedis(?:Cluster|Sentinel|Array)?\b/, "redis"],
  [/\bMemcached\b/, "memcached"],
];

/**
 * A hint for a fatal error caused by a missing extension (`Class "Collator" not found`).
 * @returns e.g. ` The intl extension is not loaded: …`, or `""` when the error is about something else.
 */
export function missingExtensionHint(message: string, loaded: readonly string[] = []): string {
  if (!/not found|undefined function/.test(message)) return "";
  for (const [symbols, extension] of EXTENSION_SYMBOLS) {
    const m = /(?:Class|function|Interface) "?([\w\\]+)"? not found|Call to undefined function ([\w\\]+)\(/.exec(message);
    const name = m?.[1] ?? m?.[2];
    if (name && symbols.test(name.replace(/^\\/, "")) && !loaded.includes(extension)) {
      return ` The ${extension} extension is not loaded: run with --php-extension ${extension} (a recipe: "runtime": { "extensions": ["${extension}"] }; the Node API: create({ extensions: ["${extension}"] })).`;
    }
  }
  return "";
}
