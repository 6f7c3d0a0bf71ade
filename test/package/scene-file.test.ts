import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `troupe run ./my-scene.ts` as a user meets it: troupe packed (`npm pack` builds it) and
 * installed from the tarball into a fresh project, whose own scene files — TypeScript importing
 * `troupe` and a sibling `./moves.js` that is really `moves.ts`, and plain JavaScript — are run by
 * the installed `troupe` command, which is compiled JavaScript.
 */

const root = resolve(import.meta.dirname, '../..');
let work: string;
let project: string;

const npm = (args: string[], cwd: string): string =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' } });

/** Runs the installed bin, as `npx troupe …` would, from `cwd`. */
function troupe(args: string[], cwd = project) {
  const result = spawnSync(join(project, 'node_modules/.bin/troupe'), args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'troupe-scene-file-'));
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', work], root)) as { filename: string }[];
  project = join(work, 'app');
  mkdirSync(join(project, 'scenes'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module', dependencies: { troupe: `file:${join(work, packed[0]!.filename)}` } }));
  npm(['install', '--prefer-offline', '--no-package-lock'], project);
  writeFileSync(
    join(project, 'scenes/moves.ts'),
    `export type Move = 'lunge' | 'parry';
export const answer = (move: Move): Move => (move === 'lunge' ? 'parry' : 'lunge');
`,
  );
  writeFileSync(
    join(project, 'scenes/duel.ts'),
    `import { createScene, defineScene, sceneOptionsFrom, type Brain } from 'troupe';
import { answer, type Move } from './moves.js';

interface Fencer { name: string; foe: string; opening: Move }
const fencers: Fencer[] = [{ name: 'ada', foe: 'bo', opening: 'lunge' }, { name: 'bo', foe: 'ada', opening: 'parry' }];

export const scene = defineScene({
  description: 'two fencers trade moves',
  ticks: 2,
  options: { rounds: { type: 'number', integer: true, min: 1, max: 5, default: 1, description: 'exchanges' } },
  create: (context) => {
    const duel = createScene({ name: 'duel', ...sceneOptionsFrom(context) });
    for (const fencer of fencers) {
      const brain: Brain = (p) => (p.tick === 1 ? \`<ACTION><say><text>\${fencer.opening}, then \${answer(fencer.opening)}!</text><to>\${fencer.foe}</to></say></ACTION>\` : null);
      duel.add({ name: fencer.name, brain, triggers: ['start'] });
    }
    return duel;
  },
  summarize: (duel, result) => \`the duel ended at tick \${result.tick} with \${duel.agents.size} fencers\`,
});
`,
  );
  writeFileSync(
    join(project, 'scenes/echo.js'),
    `import { createScene, defineScene, sceneOptionsFrom } from 'troupe';
export const scene = defineScene({
  description: 'one voice',
  ticks: 1,
  create: (context) => {
    const echo = createScene({ name: 'echo', ...sceneOptionsFrom(context) });
    echo.add({ name: 'voice', brain: () => 'Hello?', triggers: ['start'] });
    return echo;
  },
});
`,
  );
  writeFileSync(join(project, 'scenes/broken.ts'), `export const scene = { description: 'no create' };\n`);
}, 240_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('troupe run <file>, installed', { timeout: 60_000 }, () => {
  it('runs a TypeScript scene file (types, a .js import of a .ts sibling, `troupe` from the project)', () => {
    const { code, out, err } = troupe(['run', './scenes/duel.ts', '--seed', '4']);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('ada → bo: "lunge, then parry!"');
    expect(out).toContain('bo → ada: "parry, then lunge!"');
    expect(out.trimEnd().split('\n').at(-1)).toBe('the duel ended at tick 1 with 2 fencers');
  });

  it('takes the file’s own options as flags, and shows its help', () => {
    expect(troupe(['run', 'scenes/duel.ts', '--rounds', '9']).err).toContain('--rounds must be an integer from 1 to 5; got "9"');
    const help = troupe(['run', './scenes/duel.ts', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('two fencers trade moves');
  });

  it('runs a JavaScript scene file, from another folder by a relative path', () => {
    const { code, out } = troupe(['run', 'app/scenes/echo.js', '--seed', '1', '--quiet'], work);
    expect(code).toBe(0);
    expect(out).toBe('echo ended (quiet): 1 tick, 1 turn, 0 failures; seed 1\n');
  });

  it('says what is wrong with a missing file, a file that is no scene, and a path that is no script', () => {
    expect(troupe(['run', './scenes/nope.ts'])).toMatchObject({ code: 2, err: expect.stringMatching(/^troupe: no scene file \.\/scenes\/nope\.ts \(looked for .*nope\.ts\)\n$/) });
    expect(troupe(['run', './scenes/broken.ts'])).toMatchObject({ code: 1, err: 'troupe: ./scenes/broken.ts must export `scene` made with defineScene (it exports scene)\n' });
    expect(troupe(['run', './scenes'])).toMatchObject({ code: 2, err: 'troupe: ./scenes is not a scene file: give a .ts or .js file (or a scene name, see: troupe list)\n' });
  });
});
