/**
 * Renders calls as `<ACTION>` XML that `parseOutput` and the validate stage read back to the same
 * values: the few-shot example of the manifest, and the round-trip property tests.
 */
import { isXmlSpace } from './xml-chars.js';

/** One call to render: a tool name and JSON-like arguments. */
export type RenderableCall = { name: string; args: Record<string, unknown> };

/** How to render strings. */
export type RenderOptions = {
  /** Parameters kept verbatim by the tool: written between newlines, which the parser strips. */
  verbatimParams?: readonly string[];
  /** `auto` (default) uses CDATA for multi-line text with `<` or `&`; `always` and `never` force it. */
  cdata?: 'auto' | 'always' | 'never';
};

/**
 * Renders one call as XML: strings escaped with entities or wrapped in CDATA, arrays of scalars as
 * repeated tags (other arrays as `<item>` children), objects as child elements, numbers, booleans
 * and `null` as text. Leading and trailing whitespace of strings is written as character
 * references so trimming keeps it. Characters XML forbids cannot be represented and are written
 * as they are (the parser then reports `invalid_character`).
 *
 * @example
 * renderCall({ name: 'read_file', args: { path: 'a.ts' } })
 * // → '<read_file>\n<path>a.ts</path>\n</read_file>'
 */
export function renderCall(call: RenderableCall, options: RenderOptions = {}): string {
  const verbatim = new Set(options.verbatimParams ?? []);
  const lines = Object.entries(call.args).flatMap(([name, value]) =>
    renderProperty(name, value, { verbatim: verbatim.has(name), cdata: options.cdata ?? 'auto' }),
  );
  return [`<${call.name}>`, ...lines, `</${call.name}>`].join('\n');
}

/**
 * Renders calls as one `<ACTION>` block, each call with its own options (for `verbatimParams`).
 *
 * @example
 * renderAction([{ name: 'read_file', args: { path: 'a.ts' } }])
 * // → '<ACTION>\n<read_file>\n<path>a.ts</path>\n</read_file>\n</ACTION>'
 */
export function renderAction(calls: readonly (RenderableCall & RenderOptions)[], options: RenderOptions = {}): string {
  const rendered = calls.map((call) => renderCall(call, { ...options, ...definedOptions(call) }));
  return ['<ACTION>', ...rendered, '</ACTION>'].join('\n');
}

function definedOptions(call: RenderOptions): RenderOptions {
  return {
    ...(call.verbatimParams !== undefined && { verbatimParams: call.verbatimParams }),
    ...(call.cdata !== undefined && { cdata: call.cdata }),
  };
}

type StringMode = { verbatim: boolean; cdata: 'auto' | 'always' | 'never' };

/** One property or argument: repeated tags for an array of scalars, else one element. */
function renderProperty(name: string, value: unknown, mode: StringMode): string[] {
  if (value === undefined) return [];
  if (Array.isArray(value) && value.length >= 2 && value.every(isScalar)) {
    return value.map((item) => `<${name}>${renderInner(item, mode)}</${name}>`);
  }
  return [`<${name}>${renderInner(value, mode)}</${name}>`];
}

/** The inner text of an element holding `value`. */
function renderInner(value: unknown, mode: StringMode): string {
  if (typeof value === 'string') return renderString(value, mode);
  if (value === null) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '';
    // A lone scalar is a one-item array by itself, unless it is '' (an empty element is []).
    if (value.length === 1 && isScalar(value[0]) && value[0] !== '') return renderInner(value[0], mode);
    const plain = { verbatim: false, cdata: mode.cdata };
    return value.map((item) => `\n<item>${renderInner(item === undefined ? null : item, plain)}</item>`).join('') + '\n';
  }
  if (typeof value === 'object') {
    const plain = { verbatim: false, cdata: mode.cdata };
    const children = Object.entries(value as Record<string, unknown>).flatMap(([key, item]) => renderProperty(key, item, plain));
    return children.length === 0 ? '' : `\n${children.join('\n')}\n`;
  }
  return '';
}

function isScalar(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean', 'bigint'].includes(typeof value);
}

/** A string as element text that decodes back to exactly `value`. */
function renderString(value: string, mode: StringMode): string {
  if (value === '') return '';
  const useCdata =
    mode.cdata === 'always' ||
    (mode.cdata === 'auto' && value.includes('\n') && (value.includes('<') || value.includes('&')));
  // A CR before the closing newline would merge into a CRLF that verbatim decoding strips.
  const cdata = useCdata && !value.includes('\r');
  if (mode.verbatim) {
    // Whitespace-only text decodes to '', so it is written entirely as references.
    if (isAllSpace(value)) return [...value].map(reference).join('');
    return `\n${cdata ? wrapCdata(value) : escapeText(value, false)}\n`;
  }
  if (cdata) return wrapCdata(value);
  return escapeText(value, true);
}

function wrapCdata(value: string): string {
  // `]]>` cannot sit inside one CDATA section: end the section between `]]` and `>`.
  return `<![CDATA[${value.replaceAll(']]>', ']]]]><![CDATA[>')}]]>`;
}

/** Escapes `&`, `<`, `>` and CR; with `protectEnds`, leading and trailing whitespace too. */
function escapeText(value: string, protectEnds: boolean): string {
  let start = 0;
  let end = value.length;
  if (protectEnds) {
    while (start < end && isXmlSpace(value.charCodeAt(start))) start++;
    while (end > start && isXmlSpace(value.charCodeAt(end - 1))) end--;
  }
  const middle = value
    .slice(start, end)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('\r', '&#13;');
  return [...value.slice(0, start)].map(reference).join('') + middle + [...value.slice(end)].map(reference).join('');
}

function reference(char: string): string {
  return `&#${char.codePointAt(0) as number};`;
}

function isAllSpace(value: string): boolean {
  for (let index = 0; index < value.length; index++) if (!isXmlSpace(value.charCodeAt(index))) return false;
  return true;
}
