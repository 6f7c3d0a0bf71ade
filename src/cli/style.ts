import * as util from 'node:util';

/** The few looks the transcript uses; each maps to one or more `util.inspect.colors` formats. */
export type Look = 'dim' | 'bold' | 'name' | 'speech' | 'tool' | 'ok' | 'warn' | 'error' | 'world' | 'scene';

/** Dresses text in a look; the plain styler returns it unchanged. */
export type Styler = (look: Look, text: string) => string;

/** The signature of `util.styleText` that we call (Node 20.12+). */
export type StyleText = (format: string | string[], text: string, options?: { validateStream?: boolean }) => string;

const FORMATS: Record<Look, string[]> = {
  dim: ['dim'],
  bold: ['bold'],
  name: ['bold', 'cyan'],
  speech: ['white'],
  tool: ['blue'],
  ok: ['green'],
  warn: ['yellow'],
  error: ['red'],
  world: ['magenta'],
  scene: ['bold', 'green'],
};

/** The styler that leaves text as it is: pipes, files, NO_COLOR, tests. */
export const plain: Styler = (_look, text) => text;

/** Whether a stream is a terminal (in-memory test streams may say so too). */
export function isTty(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

/**
 * Whether to colour what goes to `stream`: only a terminal, and only when `NO_COLOR` is unset or
 * empty (https://no-color.org).
 */
export function wantsColour(stream: NodeJS.WritableStream, env: Readonly<Record<string, string | undefined>>): boolean {
  const noColor = env.NO_COLOR;
  return isTty(stream) && (noColor === undefined || noColor === '');
}

/**
 * A styler for one stream. `util.styleText` exists from Node 20.12 while our engines allow 20.10,
 * so it is looked up at run time (a named import would fail to link on older versions) and plain
 * text is the fallback (`styleText: null`).
 */
export function createStyler(colour: boolean, styleText: StyleText | null = builtinStyleText()): Styler {
  if (!colour || styleText === null) return plain;
  // We decided about colour already; newer Node versions would otherwise check process.stdout
  // themselves, which is the wrong stream for stderr and for tests.
  return (look, text) => styleText(FORMATS[look], text, { validateStream: false });
}

function builtinStyleText(): StyleText | null {
  const candidate = (util as { styleText?: unknown }).styleText;
  return typeof candidate === 'function' ? (candidate as StyleText) : null;
}
