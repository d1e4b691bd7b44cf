/**
 * Secret redaction for every text artifact: declared secret values plus well-known
 * WordPress credentials (auth cookies, nonces, password/token JSON fields, Authorization headers).
 */
import { SECRET_ALL_FORMS_MAX_CHARS, SECRET_ENCODED_FORMS_MIN_CHARS } from "./defaults.js";
import { findWrapped, textUnits } from "./wrapped-search.js";

/** What replaces a redacted value. */
export const REDACTED = "[REDACTED]";

/** What overwrites each byte of a secret in a binary file (`Redactor.redactBytes`): `*`. */
export const MASK_BYTE = 0x2a;

/** A copy of `bytes` with ASCII `A`–`Z` lowered (every other byte as is, so offsets map back). */
function asciiLower(bytes: Uint8Array): Buffer {
  const out = Buffer.from(bytes);
  for (let i = 0; i < out.length; i++) {
    const b = out[i]!;
    if (b >= 0x41 && b <= 0x5a) out[i] = b + 0x20;
  }
  return out;
}

/** A redactor with a running count of replacements. */
export interface Redactor {
  /** Returns `text` with every secret and credential pattern replaced by `[REDACTED]`. */
  redact(text: string): string;
  /** Deep copy of a JSON-like value with every string (not keys) redacted. */
  redactValue<T>(value: T): T;
  /**
   * `value` as JSON text (`space` as for `JSON.stringify`) with every string, key, and number or
   * boolean whose text holds a secret redacted (such a number becomes the string `"[REDACTED]"`),
   * then the text redacted again for patterns that span it; always valid JSON.
   */
  redactJson(value: unknown, space?: number): string;
  /**
   * `bytes` with every occurrence of every secret form (see `encodedForms`, as UTF-8; the caseless
   * ones in any ASCII letter case; the base64 and hex ones also cut into lines or groups, their
   * separators masked with them) overwritten by as many `*` bytes (`MASK_BYTE`): the length and
   * every other byte stay, so a binary file (an SQLite database, an image) keeps its structure.
   * Overlapping occurrences merge and count once. The credential patterns are not applied (their
   * values have no fixed length). Returns `bytes` itself when nothing matched, else a copy.
   */
  redactBytes(bytes: Uint8Array): Uint8Array;
  /** Replacements made so far, across all calls. */
  readonly redactions: number;
}

/**
 * Where a credential name starts: not after a letter, digit, `_` or `-`, except right after a
 * JSON escape (`\n`, `\r`, `\t`): in JSON-escaped text a header on its own line follows a literal
 * `\n`, and there is no word boundary between that `n` and the name.
 */
const NAME_START = String.raw`(?:(?<![A-Za-z0-9_-])|(?<=\\[nrt]))`;
/**
 * Between a header name and its value: `: ` as sent, or a quoted name and value as code writes them
 * (`'X-WP-Nonce': "abc"`, `"Authorization" => 'Bearer abc'`), quotes possibly JSON-escaped (`\"`).
 */
const HEADER_SEP = String.raw`(?:\\*["'])?\s*(?::|=>)\s*(?:\\*["'])?`;

/**
 * `(prefix)(value)` patterns; the value group is replaced, the prefix kept. The cookie, nonce and
 * header values stop at a backslash: in JSON-escaped text (`href=\"…?_wpnonce=abc\"`, the way a
 * result's HTML sits in commands.jsonl) the backslash belongs to the escaped quote, and taking it
 * would leave a bare `"` that ends the JSON string early.
 */
const PATTERNS: readonly RegExp[] = [
  // WordPress auth cookies: wordpress_logged_in_<hash>=…, wordpress_sec_<hash>=…, wordpress_<hash>=…
  new RegExp(String.raw`(${NAME_START}wordpress_(?:logged_in_|sec_)?[0-9a-f]{0,64}=)([^;\s"'&,\\]+)`, "gi"),
  // Nonces in query strings / form bodies / headers.
  new RegExp(String.raw`(${NAME_START}_wpnonce=)([^&\s"';\\]+)`, "gi"),
  new RegExp(String.raw`(${NAME_START}x-wp-nonce${HEADER_SEP})([^\s"';,\\]+)`, "gi"),
  // Authorization headers: `Authorization: Bearer tok`; quoted, the scheme is optional (`"Authorization": "tok"`).
  new RegExp(String.raw`(${NAME_START}authorization:\s*(?:bearer|basic)\s+)([^\s"';,\\]+)`, "gi"),
  new RegExp(String.raw`(${NAME_START}authorization(?:\\*["'])\s*(?::|=>)\s*\\*["'](?:[a-z][\w-]*\s+)?)([^\s"';,\\]+)`, "gi"),
  // JSON string fields whose name says they carry a credential.
  // (`password`, `user_pass`, `access-token`, `api_key`, `_wpnonce`; not `compass` or `bypass`).
  /("_?(?:[a-z0-9]+[_-])*(?:password|passwd|pass|pwd|secret|token|nonce|wpnonce|api[_-]?key)"\s*:\s*")((?:[^"\\]|\\.)*)(?=")/gi,
  // camelCase credential fields (`userPassword`, `accessToken`, `apiKey`).
  /("[a-z][a-zA-Z0-9]*(?:Password|Token|Secret|Nonce|ApiKey)"\s*:\s*")((?:[^"\\]|\\.)*)(?=")/g,
];

/**
 * One form of a secret to look for; `caseless` ones match in any letter case; `wrapped` ones (base64,
 * base64url, hex and their escapes) also match cut into lines or groups (see `findWrapped`).
 */
interface SecretForm {
  text: string;
  caseless: boolean;
  wrapped?: boolean;
}

/** How many JSON-escaping layers are undone: printed `json_encode(json_encode($s))` inside a JSON artifact is three. */
const JSON_DEPTH = 3;

/** `\uXXXX` for every UTF-16 unit above ASCII, as PHP's `json_encode` writes them (lower-case hex). */
const escapeNonAscii = (s: string): string => s.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
const jsonBody = (s: string): string => JSON.stringify(s).slice(1, -1);
/** JavaScript's `JSON.stringify` and the four `json_encode` flag combinations (slashes and non-ASCII escaped or not). */
const JSON_ESCAPES: readonly ((s: string) => string)[] = [
  jsonBody,
  (s) => escapeNonAscii(jsonBody(s)),
  (s) => jsonBody(s).replace(/\//g, "\\/"),
  (s) => escapeNonAscii(jsonBody(s)).replace(/\//g, "\\/"),
];

const hexEscape = (c: string): string => `%${c.charCodeAt(0).toString(16).toUpperCase()}`;
/** JavaScript's `encodeURIComponent`, PHP's `rawurlencode` and `urlencode`, and form encoding (space as `+`). */
function urlForms(s: string): string[] {
  const uri = encodeURIComponent(s);
  const raw = uri.replace(/[!'()*]/g, hexEscape);
  return [uri, uri.replace(/%20/g, "+"), raw, raw.replace(/~/g, hexEscape).replace(/%20/g, "+")];
}

/** HTML 4 names of U+00A0–U+00FF, in code point order, as PHP's `htmlentities` writes them. */
const LATIN1_ENTITY_NAMES = "nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml".split(" ");
/** HTML 4 names beyond Latin-1 that secrets and passwords tend to contain. */
const OTHER_ENTITY_NAMES: Record<string, string> = { "€": "euro", "–": "ndash", "—": "mdash", "‘": "lsquo", "’": "rsquo", "“": "ldquo", "”": "rdquo", "•": "bull", "…": "hellip", "™": "trade", "†": "dagger", "‡": "Dagger", "‰": "permil", "Œ": "OElig", "œ": "oelig", "Š": "Scaron", "š": "scaron", "Ÿ": "Yuml", "ƒ": "fnof" };

/**
 * Character references for a value with non-ASCII characters: PHP's `htmlentities` (named where
 * HTML 4 has a name, `&amp;`, `&quot;`, `&#039;`), and numeric references in decimal and hex
 * (`mb_encode_numericentity`, many JavaScript escapers). Empty for an ASCII value: `htmlForms` has it.
 */
function htmlEntityForms(s: string): string[] {
  if (!/[^\x00-\x7f]/.test(s)) return [];
  const base = s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#039;");
  const each = (ref: (c: string, code: number) => string): string => [...base].map((c) => (c.codePointAt(0)! > 0x7f ? ref(c, c.codePointAt(0)!) : c)).join("");
  return [
    each((c, code) => (code >= 0xa0 && code <= 0xff ? `&${LATIN1_ENTITY_NAMES[code - 0xa0]};` : OTHER_ENTITY_NAMES[c] ? `&${OTHER_ENTITY_NAMES[c]};` : c)),
    each((_, code) => `&#${code};`),
    each((_, code) => `&#x${code.toString(16)};`),
  ];
}

/**
 * Other ways a program turns a value around: reversed (`strrev` of an ASCII value; the characters
 * reversed for any value), UTF-16 in either byte order (`mb_convert_encoding`; ASCII values only,
 * since other UTF-16 bytes are not UTF-8 text), and quoted-printable (`quoted_printable_encode`,
 * unbroken; only where it differs from the value).
 */
function rearrangedForms(s: string): string[] {
  const out = [[...s].reverse().join("")];
  if (/^[\x00-\x7f]*$/.test(s)) out.push([...s].map((c) => `${c}\0`).join(""), [...s].map((c) => `\0${c}`).join(""));
  const qp = [...Buffer.from(s, "utf8")].map((b) => (b === 0x3d || b < 0x20 || b > 0x7e ? `=${b.toString(16).toUpperCase().padStart(2, "0")}` : String.fromCharCode(b))).join("");
  if (qp !== s) out.push(qp);
  return out;
}

/**
 * HTML escapes: `htmlspecialchars` (`&#039;`, or `&apos;` with ENT_HTML5, or quotes left alone),
 * `esc_html` (which does not encode the `&` of an existing entity again), and the `&#39;` / `&#x27;`
 * of JavaScript escapers.
 */
function htmlForms(s: string): string[] {
  const out: string[] = [];
  for (const amp of [/&/g, /&(?!(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);)/gi]) {
    for (const apos of ["&#039;", "&#39;", "&#x27;", "&apos;", "'"]) {
      for (const quot of ["&quot;", '"']) {
        out.push(s.replace(amp, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, quot).replace(/'/g, apos));
      }
    }
  }
  return out;
}

/**
 * Base64 of the value's UTF-8 bytes, standard and URL-safe alphabets, padded and not; and, for the
 * value inside a longer base64 text (`base64_encode("token=$secret")`), the characters that depend
 * on its bytes alone at each of the three byte alignments.
 */
function base64Forms(bytes: Buffer): string[] {
  const out: string[] = [];
  const full = bytes.toString("base64");
  out.push(full, full.replace(/=+$/, ""));
  for (let shift = 0; shift < 3; shift++) {
    const shifted = Buffer.concat([Buffer.alloc(shift), bytes]).toString("base64");
    const first = Math.ceil((shift * 8) / 6);
    const last = Math.floor(((shift + bytes.length) * 8) / 6);
    if (last - first >= 4) out.push(shifted.slice(first, last));
  }
  return out.flatMap((b) => [b, b.replace(/\+/g, "-").replace(/\//g, "_")]);
}

/**
 * The forms a secret takes once a program prints it, each redacted wherever it occurs:
 * - always: the value as is; JSON-escaped (JavaScript, and PHP's `json_encode` with `/` escaped as
 *   `\/` and non-ASCII as `\uXXXX`, or not), up to three layers deep (a value printed with
 *   `json_encode(json_encode(…))` inside a JSON artifact); URL-encoded (`encodeURIComponent`,
 *   `rawurlencode`, `urlencode`); HTML-escaped (`esc_html`, `htmlspecialchars`: `&amp;`, `&quot;`,
 *   `&#039;`/`&#39;`/`&#x27;`/`&apos;`, `&lt;`, `&gt;`). These rewrite only the characters that need
 *   it, so they are as specific as the value;
 * - for a secret of at least `SECRET_ENCODED_FORMS_MIN_CHARS` (8) characters only: the above in any
 *   letter case (`strtoupper`, `strtolower`, `ucfirst`, and `mb_strtoupper` also inside escapes), base64 and base64url of its UTF-8 bytes
 *   (padded or not, alone or inside a longer base64 text), and hex (`bin2hex`, either case); each
 *   also URL-encoded and JSON-escaped. A shorter value's base64 or hex is a few characters of a
 *   small alphabet that turn up by chance, and redacting them would destroy unrelated text.
 *   A redactor also finds the base64, base64url and hex forms cut into lines or groups (see
 *   `findWrapped`: `chunk_split`, MIME lines, `aa:bb:cc`); this list holds each form unbroken.
 *   Also, for such a value: its non-ASCII characters as HTML character references (`htmlentities`,
 *   decimal and hex), the value reversed (`strrev`), in UTF-16 (ASCII values) and quoted-printable.
 * @returns the distinct forms (any order); the caseless ones in the case they were computed.
 */
export function encodedForms(secret: string): string[] {
  return secretForms(secret).map((f) => f.text);
}

/** Forms of recently seen secrets: a run builds several redactors (bundle, observations, exports) for the same values. */
const formsCache = new Map<string, SecretForm[]>();
const FORMS_CACHE_ENTRIES = 32;

function secretForms(secret: string): SecretForm[] {
  let forms = formsCache.get(secret);
  if (!forms) {
    forms = computeSecretForms(secret);
    if (formsCache.size >= FORMS_CACHE_ENTRIES) formsCache.delete(formsCache.keys().next().value!);
    formsCache.set(secret, forms);
  }
  return forms;
}

function computeSecretForms(secret: string): SecretForm[] {
  const long = [...secret].length >= SECRET_ENCODED_FORMS_MIN_CHARS;
  // A very long value gets the common forms only (see SECRET_ALL_FORMS_MAX_CHARS).
  const huge = secret.length > SECRET_ALL_FORMS_MAX_CHARS;
  const forms = new Map<string, boolean>();
  const wrappedForms = new Set<string>();
  const add = (text: string, caseless: boolean, wrapped: boolean): void => {
    if (text.length > 0 && !forms.has(text)) forms.set(text, caseless);
    if (wrapped && text.length > 0) wrappedForms.add(text);
  };
  const printed: SecretForm[] = [];
  for (const text of [secret, ...urlForms(secret), ...(huge ? htmlForms(secret).slice(0, 2) : htmlForms(secret))]) printed.push({ text, caseless: long });
  if (long) {
    const bytes = Buffer.from(secret, "utf8");
    for (const b of base64Forms(bytes)) for (const text of huge ? [b] : [b, ...urlForms(b)]) printed.push({ text, caseless: false, wrapped: true });
    printed.push({ text: bytes.toString("hex"), caseless: true, wrapped: true });
    if (!huge) for (const text of [...htmlEntityForms(secret), ...rearrangedForms(secret)]) printed.push({ text, caseless: false });
    // Caseless matching covers another case of the text itself, not of its escapes: `mb_strtoupper`
    // turns `ä` (`\u00e4`, `%C3%A4`) into `Ä` (`\u00c4`, `%C3%84`).
    for (const cased of huge ? [] : new Set([secret.toUpperCase(), secret.toLowerCase()])) {
      if (cased !== secret && /[^\x00-\x7f]/.test(cased)) for (const text of [cased, ...urlForms(cased)]) printed.push({ text, caseless: true });
    }
  }
  for (const form of printed) {
    let layer = new Set([form.text]);
    add(form.text, form.caseless, form.wrapped === true);
    for (let depth = 0; depth < (huge ? 1 : JSON_DEPTH); depth++) {
      const next = new Set<string>();
      for (const text of layer) for (const escape of JSON_ESCAPES) next.add(escape(text));
      for (const text of next) add(text, form.caseless, form.wrapped === true);
      layer = next;
    }
  }
  return [...forms].map(([text, caseless]) => ({ text, caseless, ...(wrappedForms.has(text) ? { wrapped: true } : {}) }));
}

/** Index of the backslash that starts the JSON escape (`\x` or `\uXXXX`) covering `p` (`q < p < q + length`), else `p`. */
function escapeStart(text: string, p: number): number {
  for (let q = p - 1; q >= Math.max(0, p - 5); q--) {
    if (text[q] !== "\\") continue;
    let run = 1;
    while (q - run >= 0 && text[q - run] === "\\") run++;
    if (run % 2 === 0) return p; // an escaped backslash: plain text from here on
    const length = text[q + 1] === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(q + 2, q + 6)) ? 6 : 2;
    return q + length > p ? q : p;
  }
  return p;
}

/** `[start, end)` widened to whole JSON escapes, so that replacing it never leaves half of `\"` or `\u20ac` behind. */
function widen(text: string, start: number, end: number): [number, number] {
  const s = escapeStart(text, start);
  const q = escapeStart(text, end);
  const e = q < end ? q + (text[q + 1] === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(q + 2, q + 6)) ? 6 : 2) : end;
  return [s, e];
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** Longest caseless form matched with a RegExp (only where lower-casing changes lengths). */
const MAX_CASELESS_REGEXP_CHARS = 16_384;

/**
 * Builds a redactor for the given secret values and their encoded forms (see `encodedForms` for the
 * forms and the minimum length); the base64, base64url and hex forms also when separators of up to
 * `WRAP_SEPARATOR_MAX_CHARS` sit between their characters (`findWrapped`), the span then covering
 * the separators. Every occurrence of every form is found, overlapping ones merge,
 * and each stretch is replaced by one `[REDACTED]`, widened to whole JSON escapes so that escaped
 * text (commands.jsonl) stays valid JSON; then the credential patterns run. Text already inside a
 * `[REDACTED]` is left alone and not counted again.
 * @param secrets - literal values (secret env values, tokens). Empty strings are ignored.
 * @returns `{ redact, redactValue, redactJson, redactions }`.
 * @example createRedactor(["s3cret"]).redact("token=s3cret") // "token=[REDACTED]"
 */
export function createRedactor(secrets: readonly string[]): Redactor {
  const forms = new Map<string, SecretForm>();
  for (const secret of new Set(secrets.filter((s) => typeof s === "string" && s.length > 0))) {
    for (const form of secretForms(secret)) {
      const seen = forms.get(form.text);
      const wrapped = form.wrapped === true || seen?.wrapped === true;
      forms.set(form.text, { text: form.text, caseless: form.caseless || seen?.caseless === true, ...(wrapped ? { wrapped } : {}) });
    }
  }
  const exact = [...forms.values()].filter((f) => !f.caseless).map((f) => f.text);
  // Caseless forms are searched in lower-cased text with indexOf, not as RegExps: a secret may be
  // megabytes long, beyond what a RegExp can hold. Where lower-casing changes a text's length (a
  // few non-ASCII letters), indexes would not map back, so a RegExp does it, for forms short enough.
  const caseless = [...forms.values()].filter((f) => f.caseless).map((f) => ({ lower: f.text.toLowerCase(), text: f.text }));
  const caselessRegExps = new Map<string, RegExp>();
  const caselessRegExp = (form: string): RegExp | undefined => {
    if (form.length > MAX_CASELESS_REGEXP_CHARS) return undefined;
    let re = caselessRegExps.get(form);
    if (!re) caselessRegExps.set(form, (re = new RegExp(escapeRegExp(form), "gi")));
    return re;
  };
  // Base64, base64url and hex forms (ASCII) are also searched cut into lines or groups.
  const wrappedExact = [...forms.values()].filter((f) => f.wrapped && !f.caseless).map((f) => f.text);
  const wrappedCaseless = [...new Set([...forms.values()].filter((f) => f.wrapped && f.caseless).map((f) => f.text.toLowerCase()))];
  const hasWrapped = wrappedExact.length + wrappedCaseless.length > 0;
  let count = 0;

  const redactSecrets = (text: string): string => {
    const found: [number, number][] = hasWrapped ? findWrapped(textUnits(text), wrappedExact, wrappedCaseless) : [];
    for (const needle of exact) {
      for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) found.push([i, i + needle.length]);
    }
    if (caseless.length > 0) {
      const lowerText = text.toLowerCase();
      const mapsBack = lowerText.length === text.length;
      for (const form of caseless) {
        if (mapsBack && form.lower.length === form.text.length) {
          for (let i = lowerText.indexOf(form.lower); i !== -1; i = lowerText.indexOf(form.lower, i + 1)) found.push([i, i + form.lower.length]);
          continue;
        }
        const re = caselessRegExp(form.text);
        if (!re) continue;
        re.lastIndex = 0;
        for (let m = re.exec(text); m; m = re.exec(text)) {
          found.push([m.index, m.index + m[0].length]);
          re.lastIndex = m.index + 1;
        }
      }
    }
    if (found.length === 0) return text;
    const markers: number[] = [];
    for (let i = text.indexOf(REDACTED); i !== -1; i = text.indexOf(REDACTED, i + 1)) markers.push(i);
    const inMarker = ([s, e]: [number, number]): boolean => markers.some((m) => m <= s && e <= m + REDACTED.length);
    const spans = found
      .filter((span) => !inMarker(span))
      .map(([s, e]) => widen(text, s, e))
      .sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    let out = "";
    let at = 0;
    for (let i = 0; i < spans.length; ) {
      let [start, end] = spans[i]!;
      for (i++; i < spans.length && spans[i]![0] < end; i++) end = Math.max(end, spans[i]![1]);
      out += text.slice(at, start) + REDACTED;
      at = end;
      count += 1;
    }
    return out + text.slice(at);
  };

  const redact = (text: string): string => {
    let out = forms.size > 0 ? redactSecrets(text) : text;
    for (const pattern of PATTERNS) {
      out = out.replace(pattern, (match: string, prefix: string, value: string) => {
        if (value === "" || value === REDACTED) return match;
        count += 1;
        return `${prefix}${REDACTED}`;
      });
    }
    return out;
  };
  const redactValue = <T>(value: T): T => {
    if (typeof value === "string") return redact(value) as T;
    if (Array.isArray(value)) return value.map((v) => redactValue(v)) as T;
    if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = redactValue(v);
      return out as T;
    }
    return value;
  };
  const redactJson = (value: unknown, space?: number): string => {
    const deep = (v: unknown): unknown => {
      if (typeof v === "string") return redact(v);
      if (typeof v === "number" || typeof v === "boolean") {
        const text = String(v);
        const redacted = redact(text);
        return redacted === text ? v : redacted;
      }
      if (Array.isArray(v)) return v.map(deep);
      if (v !== null && typeof v === "object" && !(v instanceof Uint8Array)) {
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[redact(k)] = deep(x);
        return out;
      }
      return v;
    };
    const text = JSON.stringify(deep(value), null, space);
    const redacted = redact(text);
    try {
      JSON.parse(redacted);
      return redacted;
    } catch {
      // A form matched JSON punctuation (a secret like `",`): every string, key and number is already redacted.
      return text;
    }
  };
  const exactBytes = exact.map((f) => Buffer.from(f, "utf8"));
  const caselessBytes = [...new Set(caseless.map((f) => asciiLower(Buffer.from(f.text, "utf8")).toString("latin1")))].map((f) => Buffer.from(f, "latin1"));
  const redactBytes = (bytes: Uint8Array): Uint8Array => {
    if (forms.size === 0 || bytes.byteLength === 0) return bytes;
    const haystack = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const found: [number, number][] = [];
    const search = (text: Buffer, needles: Buffer[]) => {
      for (const needle of needles) {
        for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) found.push([i, i + needle.length]);
      }
    };
    search(haystack, exactBytes);
    if (caselessBytes.length > 0) search(asciiLower(haystack), caselessBytes);
    if (hasWrapped) for (const span of findWrapped(haystack, wrappedExact, wrappedCaseless)) found.push(span);
    if (found.length === 0) return bytes;
    found.sort((a, b) => a[0] - b[0]);
    const out = new Uint8Array(bytes);
    for (let i = 0; i < found.length; ) {
      let [start, end] = found[i]!;
      for (i++; i < found.length && found[i]![0] < end; i++) end = Math.max(end, found[i]![1]);
      out.fill(MASK_BYTE, start, end);
      count += 1;
    }
    return out;
  };
  return {
    redact,
    redactValue,
    redactJson,
    redactBytes,
    get redactions() {
      return count;
    },
  };
}
