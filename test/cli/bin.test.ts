import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { SCENES } from './helpers.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
let clone = '';
afterEach(() => rmSync(clone, { recursive: true, force: true }));

describe('the troupe bin', () => {
  it('runs from the sources in a clone that has not been built (npx troupe right after npm ci)', { timeout: 60_000 }, async () => {
    // A clone without dist/: the sources, and the packages of this checkout.
    clone = mkdtempSync(join(tmpdir(), 'troupe-bin-'));
    for (const part of ['src', 'machines', 'package.json', 'tsconfig.json']) cpSync(join(root, part), join(clone, part), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'));
    const env = { ...process.env, TROUPE_SCENES_DIR: fileURLToPath(SCENES) };
    const { stdout } = await run(process.execPath, [join(clone, 'src/cli/bin.js'), 'list'], { env });
    expect(stdout).toMatch(/^talk +guests order ale/m);
    // The exit code is the command's.
    const unknown = await run(process.execPath, [join(clone, 'src/cli/bin.js'), 'nope'], { env }).catch((error: { code: number; stderr: string }) => error);
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command "nope"') });
  });

  it('says what is missing when neither the build nor the sources are there', async () => {
    clone = mkdtempSync(join(tmpdir(), 'troupe-bin-'));
    mkdirSync(join(clone, 'src/cli'), { recursive: true });
    cpSync(join(root, 'src/cli/bin.js'), join(clone, 'src/cli/bin.js'));
    const failed = await run(process.execPath, [join(clone, 'src/cli/bin.js'), 'list']).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 1, stderr: expect.stringMatching(/dist\/src\/cli\/main\.js nor .*src\/cli\/main\.ts exists: reinstall the package/) });
  });
});
