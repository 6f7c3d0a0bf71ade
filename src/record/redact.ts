import { REDACTED, type Redactor } from '../bus/safe-json.js';

/**
 * Keys whose values are secrets. `token(?!s)` spares usage counters (`inputTokens`, `maxTokens`);
 * numbers and booleans under a matching key are kept too, since no credential is a number.
 */
export const SECRET_KEY_PATTERN = /api[-_]?key|authori[sz]ation|secret|passw(?:or)?d|token(?!s)|cookie|credential|private[-_]?key/i;

/** Environment variables whose values are redacted wherever they appear in a string. */
export const SECRET_ENV_PATTERN = /(?:_API_KEY|_TOKEN|_SECRET|_PASSWORD)$/;

// Credentials recognisable on sight: HTTP auth schemes and `sk-…` provider keys.
const SECRET_SHAPES: readonly [RegExp, string][] = [
  [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/g, `$1 ${REDACTED}`],
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED],
];

/** A JSON object key with a secret-looking word in it (`"apiKey":`), as JSON text writes it. */
const SECRET_KEY_IN_JSON = new RegExp(`"[^"\\\\]*(?:${SECRET_KEY_PATTERN.source})[^"\\\\]*"\\s*:`, 'i');

/**
 * Any secret-looking word or credential shape anywhere in JSON text: when one scan finds none,
 * the text holds no secret key and no credential (the exact checks run only when it finds one).
 */
const ANY_SIGN = new RegExp(`${SECRET_KEY_PATTERN.source}|\\b(?:Bearer|Basic)\\s|\\bsk-`, 'i');

/** Any of SECRET_SHAPES: one scan tells whether a string needs the replacements at all. */
const ANY_SHAPE = new RegExp(SECRET_SHAPES.map(([pattern]) => `(?:${pattern.source})`).join('|'));

/** Env values shorter than this are not treated as secrets (they would blank out common words). */
const MIN_ENV_SECRET_CHARS = 8;

export type RedactOptions = {
  /** Extra secrets: literal strings or patterns, replaced wherever they occur. */
  secrets?: readonly (string | RegExp)[];
  /** Scanned for `*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD` values (default `process.env`). */
  env?: NodeJS.ProcessEnv;
};

/**
 * A redactor for `safeJson`: values under secret-looking keys become `[redacted]`, and so does
 * every occurrence of a listed secret, an env secret, a bearer token or an `sk-` key in any string.
 * Env values are read once, at creation.
 */
export function createRedactor(options: RedactOptions = {}): Redactor {
  const literals = new Set<string>();
  const patterns: RegExp[] = [];
  for (const secret of options.secrets ?? []) {
    if (typeof secret === 'string') {
      if (secret !== '') literals.add(secret);
    } else {
      patterns.push(new RegExp(secret.source, secret.flags.includes('g') ? secret.flags : `${secret.flags}g`));
    }
  }
  for (const [name, value] of Object.entries(options.env ?? process.env)) {
    if (SECRET_ENV_PATTERN.test(name) && value !== undefined && value.length >= MIN_ENV_SECRET_CHARS) literals.add(value);
  }
  // Longest first, so a secret that contains another is replaced whole.
  const ordered = [...literals].sort((a, b) => b.length - a.length);
  // In JSON text a secret may stand escaped (quotes, backslashes, control characters): look for both forms.
  const inJson = [...new Set(ordered.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1)]))];
  return {
    mayHide: (json) =>
      patterns.length > 0 ||
      (ANY_SIGN.test(json) && (SECRET_KEY_IN_JSON.test(json) || ANY_SHAPE.test(json))) ||
      inJson.some((secret) => json.includes(secret)),
    key: (key, value) => SECRET_KEY_PATTERN.test(key) && value !== null && value !== undefined && typeof value !== 'number' && typeof value !== 'boolean',
    text: (text) => {
      let out = text;
      for (const secret of ordered) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
      for (const pattern of patterns) out = out.replace(pattern, REDACTED);
      // Most strings hold no credential: one test instead of a replace per shape (this runs on
      // every string of every event a log or an inspector page serializes).
      if (ANY_SHAPE.test(out)) for (const [pattern, replacement] of SECRET_SHAPES) out = out.replace(pattern, replacement);
      return out;
    },
  };
}
