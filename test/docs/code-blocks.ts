import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The fenced code blocks of the docs. A block's info string is its language, then flags:
 *
 * - ```` ```ts ```` (or `js`): a complete program. It is typechecked with the project's strict
 *   options, importing `troupe` and `troupe/<subpath>` from src/, and run with tsx: it must end
 *   without an error.
 * - ```` ```ts typecheck ````: typechecked only, for a program that needs what a test machine has
 *   not got — an API key, a real model, a server to connect to — or that runs until stopped.
 * - ```` ```sh ````: commands. Every `npm run X` (and `npm test`, `npm start`) must be a script of
 *   package.json, and every `troupe <command> --flag` a command and flag the CLI knows.
 * - Anything else (no language, `json`, `text`) is shown as it is and not checked.
 */
export type CodeBlock = {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** The line of the opening fence (1-based). */
  line: number;
  language: string;
  flags: readonly string[];
  code: string;
};

/** Flags a block may carry; any other is a mistake in the docs, reported as one. */
export const BLOCK_FLAGS: readonly string[] = ['typecheck'];

/** The Markdown files the docs test reads: README.md and everything under docs/. */
export function markdownFiles(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.md'))
    .map((path) => join('docs', path))
    .sort();
  return ['README.md', ...docs];
}

/** Every fenced block of one Markdown text (``` or ~~~, as CommonMark fences them). */
export function codeBlocks(markdown: string, file: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const open = /^ {0,3}(`{3,}|~{3,})\s*(.*)$/.exec(lines[index]!);
    if (open === null) continue;
    const fence = open[1]!;
    const [language = '', ...flags] = open[2]!.trim().split(/\s+/).filter((word) => word !== '');
    const close = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    let end = index + 1;
    while (end < lines.length && !close.test(lines[end]!)) end += 1;
    blocks.push({ file, line: index + 1, language, flags, code: lines.slice(index + 1, end).join('\n') });
    index = end;
  }
  return blocks;
}

/** The blocks of README.md and docs/, in file order. */
export function docsBlocks(root: string): CodeBlock[] {
  return markdownFiles(root).flatMap((file) => codeBlocks(readFileSync(join(root, file), 'utf8'), relative(root, join(root, file))));
}
