/**
 * Secret redaction for every text artifact: declared secret values plus well-known
 * WordPress credentials (auth cookies, nonces, password/token JSON fields, Authorization headers).
 */

/** What replaces a redacted value. */
export const REDACTED = "[REDACTED]";

/** A redactor with a running count of replacements. */
export interface Redactor {
  /** Returns `text` with every secret and credential pattern replaced by `[REDACTED]`. */
  redact(text: string): string;
  /** Deep copy of a JSON-like value with every string (not keys) redacted. */
  redactValue<T>(value: T): T;
  /** Replacements made so far, across all calls. */
  readonly redactions: number;
}

/**
 * `(prefix)(value)` patterns; the value group is replaced, the prefix kept. The cookie, nonce and
 * header values stop at a backslash: in JSON-escaped text (`href=\"…?_wpnonce=abc\"`, the way a
 * result's HTML sits in commands.jsonl) the backslash belongs to the escaped quote, and taking it
 * would leave a bare `"` that ends the JSON string early.
 */
const PATTERNS: readonly RegExp[] = [
  // WordPress auth cookies: wordpress_logged_in_<hash>=…, wordpress_sec_<hash>=…, wordpress_<hash>=…
  /(\bwordpress_(?:logged_in_|sec_)?[0-9a-f]{0,64}=)([^;\s"'&,\\]+)/gi,
  // Nonces in query strings / form bodies / headers.
  /(\b_wpnonce=)([^&\s"';\\]+)/gi,
  /(\bx-wp-nonce:\s*)([^\s"';,\\]+)/gi,
  // Authorization headers.
  /(\bauthorization:\s*(?:bearer|basic)\s+)([^\s"';,\\]+)/gi,
  // JSON string fields whose name says they carry a credential.
  // (`password`, `user_pass`, `access-token`, `api_key`, `_wpnonce`; not `compass` or `bypass`).
  /("_?(?:[a-z0-9]+[_-])*(?:password|passwd|pass|pwd|secret|token|nonce|wpnonce|api[_-]?key)"\s*:\s*")((?:[^"\\]|\\.)*)(?=")/gi,
  // camelCase credential fields (`userPassword`, `accessToken`, `apiKey`).
  /("[a-z][a-zA-Z0-9]*(?:Password|Token|Secret|Nonce|ApiKey)"\s*:\s*")((?:[^"\\]|\\.)*)(?=")/g,
];

/**
 * The forms a secret takes once a program prints it: as is, JSON-escaped (JavaScript and PHP's
 * `json_encode`, which also escapes `/` and non-ASCII as `\uXXXX`), and URL-encoded (`rawurlencode`
 * and `urlencode`). Each is redacted wherever it occurs.
 */
export function encodedForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const phpJson = json.replace(/\//g, "\\/").replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  const uri = encodeURIComponent(secret);
  const form = uri.replace(/%20/g, "+");
  const php = uri.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return [...new Set([secret, json, phpJson, uri, form, php, php.replace(/%20/g, "+")])];
}

/**
 * Builds a redactor for the given secret values (and their encoded forms, see `encodedForms`). Every non-empty value is replaced wherever it
 * occurs (longest first, so a secret containing another is redacted whole); then the credential
 * patterns run. Already-redacted values are not counted twice.
 * @param secrets - literal values (secret env values, tokens). Empty strings are ignored.
 * @returns `{ redact, redactValue, redactions }`.
 * @example createRedactor(["s3cret"]).redact("token=s3cret") // "token=[REDACTED]"
 */
export function createRedactor(secrets: readonly string[]): Redactor {
  const values = [...new Set(secrets.filter((s) => typeof s === "string" && s.length > 0).flatMap(encodedForms))].sort((a, b) => b.length - a.length);
  let count = 0;
  const redact = (text: string): string => {
    let out = text;
    for (const secret of values) {
      if (!out.includes(secret)) continue;
      const parts = out.split(secret);
      count += parts.length - 1;
      out = parts.join(REDACTED);
    }
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
  return {
    redact,
    redactValue,
    get redactions() {
      return count;
    },
  };
}
