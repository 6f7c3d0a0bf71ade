import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

// What a scene's code is made of; other files of its folder (notes, data it writes) are not its code.
const SOURCE = /\.(?:[cm]?[jt]s|json)$/;

/**
 * SHA-256 of a scene definition's source: every source file (`.ts`, `.js`, `.json` …) of its
 * folder, names and contents, in a fixed order; or of the one file for a scene file. A resume
 * compares it with the log's, so that it never continues a run with other code.
 */
export function definitionHash(path: string): string {
  const hash = createHash('sha256');
  const files = statSync(path).isDirectory() ? sourceFiles(path) : [path];
  for (const file of files) {
    hash.update(`${relative(path, file) || file.split(/[\\/]/).pop()}\u0000`);
    hash.update(readFileSync(file));
    hash.update('\u0000');
  }
  return hash.digest('hex');
}

function sourceFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sourceFiles(path));
    else if (entry.isFile() && SOURCE.test(entry.name)) found.push(path);
  }
  return found;
}
