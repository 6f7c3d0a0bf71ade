import { fileURLToPath } from 'node:url';
import { terminalSafe } from './terminal-text.js';

/** Frames shown when none of the stack is in the scene's folder. */
const FALLBACK_FRAMES = 3;

/**
 * An error as the person who wrote the scene wants to read it: the message, then only the stack
 * frames in the scene's folder (the runtime's own frames are noise to them), then the cause. When
 * no frame is in the folder, the first few frames outside Node's internals and node_modules.
 * Control and bidi characters (a message may quote a model) are shown as code points.
 */
export function errorText(error: unknown, sceneDir: URL): string {
  if (!(error instanceof Error)) return `thrown: ${safeString(error)}`;
  const lines = [`${error.name}: ${error.message}`];
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  const folder = fileURLToPath(sceneDir);
  const own = frames.filter((frame) => frame.includes(folder) || frame.includes(sceneDir.href));
  const shown = own.length > 0 ? own : frames.filter((frame) => !/node:internal|node_modules/.test(frame)).slice(0, FALLBACK_FRAMES);
  lines.push(...shown.map((frame) => `    ${frame.trim()}`));
  if (error.cause !== undefined) lines.push(`  caused by ${errorText(error.cause, sceneDir).replace(/\n/g, '\n  ')}`);
  return terminalSafe(lines.join('\n'));
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return '(unprintable value)';
  }
}
