import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BROKEN, SCENES, troupe } from './helpers.js';

describe('troupe list and help', () => {
  it('lists each scene with its description, ticks and own flags', async () => {
    const { code, out, err } = await troupe(['list']);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toBe(
      [
        'clock  a clock that says the tick, every tick (150 ticks)',
        'loner  a scene on its own bus (2 ticks)',
        'talk   guests order ale; the innkeeper corrects one call and pours (4 ticks)',
        '         --guests <integer>   how many guests (default 2; from 1 to 20)',
        '         --mood <calm|rowdy>  the mood of the room (default "calm")',
        '         --shout              guests shout their orders (default off)',
        '',
      ].join('\n'),
    );
  });

  it('reads TROUPE_SCENES_DIR when main is given no folder', async () => {
    const { code, out } = await troupe(['list'], { scenesDir: undefined, env: { TROUPE_SCENES_DIR: fileURLToPath(SCENES) } });
    expect(code).toBe(0);
    expect(out).toMatch(/^talk /m);
  });

  it('reports every scene that fails to load, and exits 1', async () => {
    const { code, out, err } = await troupe(['list'], { scenesDir: BROKEN });
    expect(code).toBe(1);
    // bad-return, flooded and run-throws load fine: they fail only when built or run.
    expect(out).toMatch(/^bad-return +returns a plain object \(1 tick\)$/m);
    expect(err).toContain('troupe: broken/no-export/index.ts must export `scene` made with defineScene');
    expect(err).toContain('troupe: broken/throws-on-import/index.ts failed to load:');
  });

  it('prints help: the command’s, and a scene’s with its own flags', async () => {
    expect(await troupe(['--help'])).toMatchObject({ code: 0, out: expect.stringMatching(/^Usage:\n {2}troupe run <scene>/) });
    expect(await troupe(['run', '--help'])).toMatchObject({ code: 0, out: expect.stringContaining('--ticks N') });
    const { code, out } = await troupe(['run', 'talk', '--help']);
    expect(code).toBe(0);
    expect(out).toContain('guests order ale; the innkeeper corrects one call and pours');
    expect(out).toContain('Runs 4 ticks unless --ticks says otherwise.');
    expect(out).toMatch(/--mood <calm\|rowdy> +the mood of the room/);
  });

  it('works as a real executable (one spawn)', { timeout: 60_000 }, async () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    // The fixture folder keeps this test independent of the example scenes being worked on.
    const env = { ...process.env, TROUPE_SCENES_DIR: fileURLToPath(SCENES) };
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'list'], { cwd: root, env });
    expect(stdout).toMatch(/^talk +guests order ale/m);
  });
});
