/**
 * What `wordpress.phpunit` needs from the plugin's PHPUnit configuration file before PHPUnit runs:
 * whether the WordPress core test library will test a network (multisite). The library's bootstrap
 * decides it from `getenv('WP_MULTISITE') === '1'` or a true `WP_TESTS_MULTISITE` constant, and
 * suites commonly set either in the `<php>` section of `phpunit.xml(.dist)` or of a separate
 * `multisite.xml`. The sandbox installs the test site itself, before PHPUnit reads that file, so it
 * reads the file here with the rules PHPUnit applies to it.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";

/** The environment variable and constant the core test library reads to test a network. */
export const MULTISITE_ENV = "WP_MULTISITE";
export const MULTISITE_CONST = "WP_TESTS_MULTISITE";

/** One `<env>` or `<const>` of the configuration's `<php>` section, as PHPUnit would apply it. */
export interface PhpunitPhpSetting {
  kind: "env" | "const";
  name: string;
  /**
   * For `env`: the string PHPUnit passes to putenv() ("true" becomes "1", "false" "", unless
   * `verbatim="true"`). For `const`: the value PHPUnit defines ("true"/"false" become booleans,
   * anything else stays a string).
   */
  value: string | boolean;
  /** `force="true"` on an `<env>`: set even when the variable already exists. */
  force: boolean;
}

/**
 * Sandbox paths to try, in order, for the configuration file PHPUnit will use: with `config`
 * (relative to the plugin folder, or absolute in the sandbox) the file it names, or the
 * `phpunit.xml`/`phpunit.xml.dist` inside it when it names a folder; without, those two in the
 * plugin folder (PHPUnit's own lookup in its working directory), with PHPUnit 10's
 * `phpunit.dist.xml` between them.
 */
export function phpunitConfigCandidates(config: string | undefined, pluginDir: string): string[] {
  const inFolder = (dir: string) => [`${dir}/phpunit.xml`, `${dir}/phpunit.dist.xml`, `${dir}/phpunit.xml.dist`];
  if (config === undefined) return inFolder(pluginDir);
  const path = config.startsWith("/") ? config : `${pluginDir}/${config}`;
  // The folder's candidates first: a path naming a folder cannot be read as a file.
  return [...inFolder(path.replace(/\/+$/, "")), path];
}

type Node = Record<string, unknown>;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseAttributeValue: false,
  parseTagValue: false,
  trimValues: false,
  // Character references (&#49;) as well as the five named XML entities.
  htmlEntities: true,
});

/** PHPUnit's reading of a boolean-ish attribute: "true"/"false" in any letter case, else `otherwise`. */
function phpunitBoolean<T>(value: string, otherwise: T): boolean | T {
  const lower = value.toLowerCase();
  return lower === "true" ? true : lower === "false" ? false : otherwise;
}

/**
 * The `<env>` and `<const>` entries of `<php>` sections directly under the root element (PHPUnit's
 * `php/env` and `php/const`), in document order, converted as PHPUnit converts them.
 * @returns undefined when `xml` is not well-formed XML (PHPUnit then reports the file itself).
 */
export function phpunitPhpSettings(xml: string): PhpunitPhpSetting[] | undefined {
  if (XMLValidator.validate(xml) !== true) return undefined;
  let doc: Node[];
  try {
    doc = parser.parse(xml) as Node[];
  } catch {
    return undefined;
  }
  const children = (node: Node, key: string): Node[] => (Array.isArray(node[key]) ? (node[key] as Node[]) : []);
  const tagOf = (node: Node) => Object.keys(node).find((k) => k !== ":@" && !/^[?!#]/.test(k));
  const attrs = (node: Node) => (node[":@"] ?? {}) as Record<string, string>;
  const root = doc.find((node) => tagOf(node) !== undefined);
  if (!root) return undefined;
  const settings: PhpunitPhpSetting[] = [];
  for (const php of children(root, tagOf(root)!)) {
    if (tagOf(php) !== "php") continue;
    for (const entry of children(php, "php")) {
      const kind = tagOf(entry);
      if (kind !== "env" && kind !== "const") continue;
      const a = attrs(entry);
      const raw = a.value ?? "";
      if (kind === "const") {
        settings.push({ kind, name: a.name ?? "", value: phpunitBoolean(raw, raw), force: false });
        continue;
      }
      const verbatim = phpunitBoolean(a.verbatim ?? "", false) === true;
      // putenv("NAME=" . true) sets "1", and false sets "".
      const converted = verbatim ? raw : phpunitBoolean(raw, raw);
      settings.push({ kind, name: a.name ?? "", value: converted === true ? "1" : converted === false ? "" : converted, force: phpunitBoolean(a.force ?? "", false) === true });
    }
  }
  return settings;
}

/** PHP's truthiness of a constant's value: false, "" and "0" are false. */
function phpTruthy(value: string | boolean): boolean {
  return typeof value === "boolean" ? value : value !== "" && value !== "0";
}

/** The multisite decision for the install step, and what it rests on. */
export interface MultisiteDecision {
  /** Whether the core test library will test a network. */
  multisite: boolean;
  /** `WP_MULTISITE` as the tests will see it after PHPUnit applied the configuration; undefined when unset. */
  env: string | undefined;
}

/**
 * Whether the core test library will test a network, as its bootstrap will decide once PHPUnit has
 * applied the configuration: `WP_MULTISITE` is "1", or `WP_TESTS_MULTISITE` is defined to a true
 * value. PHPUnit sets an `<env>` only when the variable is not set already (any value, even empty)
 * unless `force="true"`, so the host's `WP_MULTISITE` wins over the file's unless the file forces
 * it; of several `<const>` of the same name the first is defined.
 * @param xml - the configuration file's text; undefined when there is none.
 * @param hostValue - the host's `WP_MULTISITE` (undefined when unset).
 */
export function multisiteFromConfig(xml: string | undefined, hostValue: string | undefined): MultisiteDecision {
  let env = hostValue;
  let constant: string | boolean | undefined;
  for (const s of (xml === undefined ? undefined : phpunitPhpSettings(xml)) ?? []) {
    if (s.kind === "env" && s.name === MULTISITE_ENV && (s.force || env === undefined)) env = String(s.value);
    if (s.kind === "const" && s.name === MULTISITE_CONST && constant === undefined) constant = s.value;
  }
  return { multisite: env === "1" || (constant !== undefined && phpTruthy(constant)), env };
}

/**
 * The text of the configuration file PHPUnit will use (see `phpunitConfigCandidates`), read from
 * the sandbox, where PHPUnit reads it; undefined when there is none.
 * @param read - reads a sandbox file: its bytes, or null when it does not exist; may throw for a folder.
 */
export async function readPhpunitConfig(read: (path: string) => Promise<Uint8Array | null>, config: string | undefined, pluginDir: string): Promise<string | undefined> {
  for (const path of phpunitConfigCandidates(config, pluginDir)) {
    const data = await read(path).catch(() => null);
    if (data !== null) return new TextDecoder().decode(data);
  }
  return undefined;
}
