import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isScenePath } from '../../src/cli/scene-file.js';
import { troupe } from './helpers.js';

const TOAST = fileURLToPath(new URL('./fixtures/files/toast.ts', import.meta.url));

describe('troupe run <file>', () => {
  it.each([
    ['./duel.ts', true],
    ['scenes/duel.js', true],
    ['duel.mts', true],
    ['C:\\scenes\\duel.ts', true],
    ['tavern', false],
    ['my-scene', false],
  ])('%s is a scene file: %s', (argument, file) => {
    expect(isScenePath(argument)).toBe(file);
  });

  it('runs the scene a TypeScript file exports, named after the file, with its own flags', async () => {
    const { code, out, err } = await troupe(['run', TOAST, '--seed', '2', '--drink', 'mead']);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('ann: "To the mead!"');
    expect(out).toContain('bo: "To the cider!"');
    expect(out).toMatch(/^toast ended \(quiet\): 1 tick, 2 turns, 0 failures; seed 2$/m);
  });

  it('a missing file is a usage error', async () => {
    expect(await troupe(['run', './no/such/scene.ts'])).toMatchObject({ code: 2, err: expect.stringMatching(/^troupe: no scene file \.\/no\/such\/scene\.ts \(looked for /) });
  });
});
