import { describe, expect, it } from 'vitest';
import { jsonTerminalSafe, terminalSafe } from '../../src/cli/terminal-text.js';
import { HOSTILE } from './fixtures/hostile/hostile/index.js';
import { jsonLines, troupe } from './helpers.js';

const HOSTILE_SCENES = new URL('./fixtures/hostile/', import.meta.url);

/** Every escape sequence in `text` that is not one of the styler's colours (SGR: ESC [ digits m). */
function foreignSequences(text: string): string[] {
  return [...text.matchAll(/\u001b(?!\[[0-9;]*m)[\s\S]{0,8}|[\u0000-\u0008\u000b-\u001a\u001c-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g)].map((match) => match[0]);
}

describe('terminalSafe', () => {
  it.each([
    ['\u001b]0;pwned\u0007', '<U+001B>]0;pwned<U+0007>'],
    ['safe\rEVIL', 'safe<U+000D>EVIL'],
    ['invoice\u202Efdp.exe', 'invoice<U+202E>fdp.exe'],
    ['\u009b31m', '<U+009B>31m'],
    ['a\u2066b\u2069\u200e\u200f\u061c\u2028\u2029', 'a<U+2066>b<U+2069><U+200E><U+200F><U+061C><U+2028><U+2029>'],
    ['nul\u0000del\u007f', 'nul<U+0000>del<U+007F>'],
  ])('shows %j as %j', (hostile, shown) => {
    expect(terminalSafe(hostile)).toBe(shown);
    expect(terminalSafe(shown)).toBe(shown);
  });

  it('keeps newlines, tabs, accents, emoji (with their joiners) and other scripts as they are', () => {
    const text = 'Ale,\tplease!\nÇa va? 👨‍👩‍👧 שלום مرحبا 日本';
    expect(terminalSafe(text)).toBe(text);
  });

  it('escapes what JSON leaves raw, and the JSON still parses to the same text', () => {
    const line = JSON.stringify({ text: HOSTILE });
    const safe = jsonTerminalSafe(line);
    expect(foreignSequences(safe)).toEqual([]);
    expect(JSON.parse(safe)).toEqual({ text: HOSTILE });
  });
});

describe('troupe run with hostile model text', () => {
  it('shows control and bidi characters as code points on a colour terminal, and keeps its own colours', async () => {
    const { code, out, err } = await troupe(['run', 'hostile', '--seed', '1'], { scenesDir: HOSTILE_SCENES, outTty: true, errTty: true });
    expect(code).toBe(0);
    expect(foreignSequences(out)).toEqual([]);
    expect(foreignSequences(err)).toEqual([]);
    // The colours are still there (SGR), and the hostile text is readable where it appeared.
    expect(out).toMatch(/\u001b\[[0-9;]*m/);
    const plain = out.replace(/\u001b\[[0-9;]*m/g, '');
    expect(plain).toContain('mallory: "<U+001B>]0;pwned<U+0007> | <U+001B>[2J<U+001B>[H');
    expect(plain).toContain('invoice<U+202E>fdp.exe');
    expect(plain).toContain('mallory: "safe<U+000D>EVIL <U+202E>fdp.exe <U+009B>31m"');
    expect(plain).toContain('✗ mallory fail() failed (execution): <U+001B>]0;pwned<U+0007> | ');
    // Values shown as JSON carry C0 controls as JSON escapes.
    expect(plain).toContain('◆ world sign = "\\u001b]0;pwned\\u0007 | ');
    expect(plain).toContain('⚙ mallory read_sign() → "\\u001b]0;pwned');
    expect(plain).toMatch(/^the sign reads: <U\+001B>.*<U\+009B>31mred/m);
  });

  it('writes --json lines a parser reads back exactly, with nothing raw for the terminal', async () => {
    const { code, out } = await troupe(['run', 'hostile', '--seed', '1', '--json'], { scenesDir: HOSTILE_SCENES, outTty: true });
    expect(code).toBe(0);
    expect(foreignSequences(out)).toEqual([]);
    const said = jsonLines(out).filter((event) => event.type === 'agent.said').map((event) => event.data.text);
    expect(said).toEqual([HOSTILE, 'safe\rEVIL \u202Efdp.exe \u009b31m']);
  });
});
