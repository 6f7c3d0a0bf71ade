import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The docs, the README, the code and the tests stand on their own: they never send a reader to
 * files that ship with neither the package nor the repository (the developers' contract notes, the
 * documents troupe was commissioned from), nor to their numbered rows. They say the thing itself,
 * or link to docs/.
 */

const root = resolve(import.meta.dirname, '../..');
const OUTSIDE = /PROTOCOL\.md|PROTOCOL [§]|DESIGN\.md|DESIGN [§]|STYLE\.md|\bRELIABILITY\b|\b[Ss]eeds? 00\d|\.\.\/shared\b|\/work\/shared/;

function files(folder: string, extensions: readonly string[], skip: readonly string[] = []): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((path) => extensions.some((extension) => path.endsWith(extension)))
    .map((path) => join(folder, path))
    .filter((path) => !skip.some((prefix) => path.startsWith(prefix)));
}

/**
 * The tests' code, benches included: comments and titles say what is tested. Recorded data
 * (golden logs, corpora, fixtures' logs) is not code and is not read.
 */
const tests = files('test', ['.ts', '.mjs', '.js']);

const checked = ['README.md', ...files('docs', ['.md']), ...files('src', ['.ts', '.js', '.html', '.css']), ...tests];

describe('docs and code that stand on their own', () => {
  it.each(checked)('%s cites nothing outside the repository', (file) => {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    const cited = lines.map((line, index) => `${index + 1}: ${line.trim()}`).filter((line) => OUTSIDE.test(line));
    expect(cited).toEqual([]);
  });
});
