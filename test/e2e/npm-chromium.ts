import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress } from 'node:zlib';

/**
 * Chromium from the `@sparticuz/chromium` npm package (a devDependency): a Chromium build for
 * x64 Linux shipped inside the tarball, brotli-compressed, with the NSS and expat libraries it
 * links against (built for Amazon Linux 2023, and linked only against glibc, so they run on
 * Debian and Ubuntu too), a font and SwiftShader. So a machine with only Node and npm can run the
 * browser tests.
 *
 * The package's own `executablePath()` unpacks into `os.tmpdir()` in place, which parallel test
 * workers would race on, and unpacks the libraries only on Amazon Linux. This unpacks once into
 * `node_modules/.cache/troupe-chromium/<version>`: into a fresh directory, renamed into place
 * when complete, so a worker sees either nothing or everything.
 */

/** A Chromium to launch, with the environment it needs. */
export type UnpackedChromium = { path: string; version: string; env: Record<string, string> };

const root = resolve(import.meta.dirname, '../..');
const PACKAGE = '@sparticuz/chromium';

/** Unpacks (once) and returns the npm Chromium, or says why there is none here. */
export async function npmChromium(): Promise<UnpackedChromium | { missing: string }> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return { missing: `${PACKAGE} ships Chromium for x64 Linux only (this is ${process.platform}/${process.arch})` };
  }
  let packageRoot: string;
  try {
    // `exports` hides package.json; the entry file sits two folders below the package root.
    packageRoot = resolve(dirname(createRequire(import.meta.url).resolve(PACKAGE)), '../..');
  } catch {
    return { missing: `${PACKAGE} is not installed (run npm install: it is a devDependency)` };
  }
  const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  // The real path: fonts.conf names its folders absolutely, and a node_modules reached through a
  // symlink (a second checkout sharing it) must not leave paths that vanish with that checkout.
  const cacheRoot = join(realpathSync(join(root, 'node_modules')), '.cache/troupe-chromium');
  const target = join(cacheRoot, version);
  if (!existsSync(join(target, 'complete'))) await unpack(join(packageRoot, 'bin'), cacheRoot, target);
  return {
    path: join(target, 'chromium'),
    version,
    env: {
      LD_LIBRARY_PATH: [join(target, 'al2023/lib'), process.env['LD_LIBRARY_PATH']].filter(Boolean).join(':'),
      FONTCONFIG_PATH: join(target, 'fonts'),
    },
  };
}

async function unpack(bin: string, cacheRoot: string, target: string): Promise<void> {
  mkdirSync(cacheRoot, { recursive: true });
  const work = mkdtempSync(join(cacheRoot, 'unpacking-'));
  try {
    await pipeline(createReadStream(join(bin, 'chromium.br')), createBrotliDecompress(), createWriteStream(join(work, 'chromium'), { mode: 0o755 }));
    // SwiftShader's libraries must sit beside the binary, which loads them from its own folder.
    await untar(join(bin, 'swiftshader.tar.br'), work);
    await untar(join(bin, 'fonts.tar.br'), join(work, 'fonts'));
    await untar(join(bin, 'al2023.tar.br'), join(work, 'al2023'));
    // The packaged fonts.conf names Lambda's folders; point fontconfig at the bundled font only,
    // so pages render the same on every machine.
    writeFileSync(
      join(work, 'fonts/fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(target, 'fonts/fonts')}</dir>\n  <cachedir>${join(target, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
    );
    writeFileSync(join(work, 'complete'), '');
    try {
      renameSync(work, target);
    } catch (error) {
      // Another worker finished first: its copy is complete, and ours is not needed.
      if (!existsSync(join(target, 'complete'))) throw error;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Brotli in Node, tar by the system's `tar` (part of every Debian and Ubuntu base system). */
async function untar(archive: string, into: string): Promise<void> {
  mkdirSync(into, { recursive: true });
  // Through a file, not a pipe: tar stops reading at the end-of-archive marker, before the padding.
  const plain = `${into}.tar`;
  await pipeline(createReadStream(archive), createBrotliDecompress(), createWriteStream(plain));
  const tar = spawn('tar', ['-x', '-f', plain, '-C', into], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  tar.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    await new Promise<void>((resolvePromise, reject) => {
      tar.on('error', reject);
      tar.on('close', (code) => (code === 0 ? resolvePromise() : reject(new Error(`tar -x -f ${plain} exited with ${String(code)}: ${stderr.trim()}`))));
    });
  } finally {
    rmSync(plain, { force: true });
  }
}
