import { describe, expect, it } from 'vitest';
import { BROKEN, troupe } from './helpers.js';

describe('troupe: usage errors exit 2 with a clear message', () => {
  it.each([
    [['run', 'talk', '--ticks', '2.5'], /troupe run talk: --ticks must be a positive integer; got "2.5"/],
    [['run', 'talk', '--ticks', '0'], /--ticks must be a positive integer; got "0"/],
    [['run', 'talk', '--ticks'], /--ticks <value>' argument missing/],
    [['run', 'talk', '--seed', 'abc'], /--seed must be an integer; got "abc"/],
    [['run', 'talk', '--log', ''], /--log needs a file path/],
    [['run', 'talk', '--quiet=yes'], /--quiet' does not take an argument/],
    [['run', 'talk', 'extra'], /unexpected argument "extra"/],
    [['run', 'talk', '--guests', '0'], /--guests must be an integer from 1 to 20; got "0"/],
    [['run', 'talk', '--guests', 'many'], /--guests must be an integer from 1 to 20; got "many"/],
    [['run', 'talk', '--mood', 'sleepy'], /--mood must be one of calm, rowdy; got "sleepy"/],
    [['run'], /run needs a scene name/],
    [['fly'], /unknown command "fly"/],
    [['list', 'extra'], /list takes no arguments/],
    [[], /Usage:/],
  ])('%j', async (argv, message) => {
    const { code, out, err } = await troupe(argv);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toMatch(message);
  });

  it('an unknown flag lists the valid ones, the scene’s own included', async () => {
    const { code, err } = await troupe(['run', 'talk', '--bogus']);
    expect(code).toBe(2);
    expect(err).toBe('troupe run talk: unknown flag --bogus; valid flags: --guests, --mood, --shout, --no-shout, --ticks, --seed, --log, --checkpoints, --quiet, --json, --help, --model, --protocol, --record, --inspect, --port, --host, --paused, --mcp, --approve, --redis, --redis-stream, --workers, --wait-workers, --partitions, --claim-idle-ms, --redis-name\n');
  });

  it('an unknown scene lists the available ones (and the nearest); a path is a scene file, not a name', async () => {
    expect(await troupe(['run', 'no-such-scene'])).toMatchObject({
      code: 2,
      err: 'troupe: no scene "no-such-scene" in scenes/. Available: clock, loner, talk; or give a scene file: troupe run ./my-scene.ts\n',
    });
    expect((await troupe(['run', 'tlak'])).err).toContain('no scene "tlak" in scenes/ (did you mean talk?). Available: clock, loner, talk');
    expect(await troupe(['run', '../etc'])).toMatchObject({ code: 2, err: 'troupe: ../etc is not a scene file: give a .ts or .js file (or a scene name, see: troupe list)\n' });
    expect(await troupe(['run', 'a b'])).toMatchObject({ code: 2, err: expect.stringMatching(/"a b" is not a scene name .*nor a scene file/) });
  });

  it('a bad TROUPE_LOG_LEVEL or scenes folder is a usage error', async () => {
    expect(await troupe(['run', 'talk'], { env: { TROUPE_LOG_LEVEL: 'loud' } })).toMatchObject({ code: 2, err: expect.stringMatching(/TROUPE_LOG_LEVEL must be one of .*warn.*; got "loud"/) });
    expect(await troupe(['list'], { scenesDir: '/no/such/folder' })).toMatchObject({ code: 2, err: expect.stringMatching(/cannot read the scenes folder \/no\/such\/folder/) });
  });
});

describe('troupe: a broken scene exits 1 with its message', () => {
  it('create throws: the message, and the stack trimmed to the scene’s own frames', async () => {
    const { code, err } = await troupe(['run', 'flooded'], { scenesDir: BROKEN });
    expect(code).toBe(1);
    expect(err).toMatch(/^troupe: scene "flooded" failed while being built:\nError: the cellar is flooded\n/);
    const frames = err.split('\n').filter((line) => line.trimStart().startsWith('at '));
    expect(frames.length).toBeGreaterThan(0);
    for (const frame of frames) expect(frame).toContain('fixtures/broken/flooded/index.ts');
  });

  it('the module throws as it is imported', async () => {
    const { code, err } = await troupe(['run', 'throws-on-import'], { scenesDir: BROKEN });
    expect(code).toBe(1);
    expect(err).toMatch(/broken\/throws-on-import\/index\.ts failed to load:\nConfigError: defineScene: `ticks` must be a positive integer, got 0/);
  });

  it('the module does not export `scene`', async () => {
    expect(await troupe(['run', 'no-export'], { scenesDir: BROKEN })).toEqual({
      code: 1,
      out: '',
      err: 'troupe: broken/no-export/index.ts must export `scene` made with defineScene (it exports sceen)\n',
    });
  });

  it('create returns something that is not a scene', async () => {
    const { code, err } = await troupe(['run', 'bad-return'], { scenesDir: BROKEN });
    expect(code).toBe(1);
    expect(err).toBe('troupe: broken/bad-return/index.ts: create() must return a Scene (made with createScene), got object\n');
  });

  it('run rejects: the transcript so far, then the error', async () => {
    const { code, out, err } = await troupe(['run', 'run-throws', '--seed', '1'], { scenesDir: BROKEN });
    expect(code).toBe(1);
    expect(out).toContain('carpenter: "Hmm."');
    expect(err).toMatch(/^troupe: scene "run-throws" failed:\nError: the roof fell in\n/);
  });

  it('--log that cannot be opened', async () => {
    const { code, err } = await troupe(['run', 'talk', '--log', '/proc/no-such-dir/run.jsonl']);
    expect(code).toBe(1);
    expect(err).toMatch(/^troupe: cannot open --log \/proc\/no-such-dir\/run\.jsonl: /);
  });
});
