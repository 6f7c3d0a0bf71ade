import { readFile, realpath } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The page's folder: `src/inspect/page/` under tsx, `dist/src/inspect/page/` once built (the
 * build copies it there).
 */
export const PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));

/** The only files served, by extension. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

// Plain names and sub-folders only: no dot-files, no `..`, no backslashes, no encoded tricks left.
const SAFE_PATH = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** A file to send, or why not. */
export type StaticFile = { ok: true; body: Buffer; contentType: string } | { ok: false; status: 404; reason: string };

/**
 * Reads `name` (the part after `/assets/`, still URL-encoded) from the page folder. Only files in
 * that folder with a known extension; a path that climbs out, even through a symlink, is not found.
 */
export async function readPageFile(name: string, dir: string = PAGE_DIR): Promise<StaticFile> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    return notFound(name);
  }
  if (!SAFE_PATH.test(decoded) || decoded.split('/').some((part) => part === '..' || part === '.')) return notFound(name);
  const contentType = CONTENT_TYPES[extname(decoded).toLowerCase()];
  if (contentType === undefined) return notFound(name);
  try {
    const root = await realpath(dir);
    const file = await realpath(join(dir, decoded));
    if (!file.startsWith(root + sep)) return notFound(name);
    return { ok: true, body: await readFile(file), contentType };
  } catch {
    return notFound(name);
  }
}

function notFound(name: string): StaticFile {
  return { ok: false, status: 404, reason: `no such file: ${name.slice(0, 100)}` };
}
