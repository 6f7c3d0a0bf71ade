import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { npmChromium } from './npm-chromium.js';

/**
 * Which Chromium the browser tests launch, first found wins:
 *
 * 1. `CHROME_PATH` (or the older `TROUPE_CHROMIUM`): that binary, and it must exist.
 * 2. The system's: `/usr/bin/chromium`, `chromium-browser`, `google-chrome`,
 *    `google-chrome-stable`, then those names on `PATH`. `TROUPE_SYSTEM_CHROMIUM` replaces this
 *    list with its own (paths separated by `:`); set it to a path that does not exist to skip the
 *    system's browser and test the npm one.
 * 3. The one inside the `@sparticuz/chromium` npm package (x64 Linux), unpacked on first use.
 */
export type FoundChromium = {
  path: string;
  source: 'CHROME_PATH' | 'system' | 'npm';
  /** Environment the binary needs on top of the test process's. */
  env?: Record<string, string>;
};

const SYSTEM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];
const SYSTEM_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

/** The Chromium to launch, or a message that says what was tried and how to get one. */
export async function findChromium(environment: NodeJS.ProcessEnv = process.env): Promise<FoundChromium | { missing: string }> {
  const named = environment['CHROME_PATH'] ?? environment['TROUPE_CHROMIUM'];
  if (named !== undefined && named !== '') {
    return existsSync(named) ? { path: named, source: 'CHROME_PATH' } : { missing: `CHROME_PATH is ${named}, which does not exist` };
  }
  const candidates = systemCandidates(environment);
  const system = candidates.find((path) => existsSync(path));
  if (system !== undefined) return { path: system, source: 'system' };
  const unpacked = await npmChromium();
  if ('missing' in unpacked) {
    return { missing: `no Chromium: none of ${candidates.join(', ')} exists, and the npm one cannot run here: ${unpacked.missing}` };
  }
  return { path: unpacked.path, source: 'npm', env: unpacked.env };
}

function systemCandidates(environment: NodeJS.ProcessEnv): string[] {
  const listed = environment['TROUPE_SYSTEM_CHROMIUM'];
  if (listed !== undefined) return listed.split(':').filter((path) => path !== '');
  const onPath = (environment['PATH'] ?? '').split(delimiter).filter((folder) => folder !== '').flatMap((folder) => SYSTEM_NAMES.map((name) => join(folder, name)));
  return [...new Set([...SYSTEM_PATHS, ...onPath])];
}
