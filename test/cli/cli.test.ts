import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

function capture() {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
}

async function troupe(...argv: string[]) {
  const out = capture();
  const err = capture();
  const code = await main(argv, out.stream, err.stream);
  return { code, out: out.text(), err: err.text() };
}

describe('the troupe command', () => {
  it('runs the quickstart with a readable transcript', async () => {
    const { code, out, err } = await troupe('run', 'quickstart');
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('quartermaster: Let me check the stores.');
    expect(out).toMatch(/⚠ correction: .*item/);
    expect(out).toContain('→ give_item');
    expect(out).toMatch(/quartermaster finished: final_answer/);
    expect(out).toMatch(/^done: final_answer after 4 rounds and 2 tool calls$/m);
  });

  it('prints bus events as JSON lines with --json', async () => {
    const { code, out } = await troupe('run', 'quickstart', '--json');
    expect(code).toBe(0);
    const events = out.trim().split('\n').map((line) => JSON.parse(line) as { type: string; v: number });
    expect(events[0]).toMatchObject({ type: 'agent.spawned', v: 1 });
    expect(events.at(-1)!.type).toBe('agent.finished');
  });

  it('lists the scenes', async () => {
    const { code, out } = await troupe('list');
    expect(code).toBe(0);
    expect(out).toMatch(/^quickstart\t/m);
  });

  it('says clearly what is wrong with bad input', async () => {
    expect(await troupe('run', 'no-such-scene')).toMatchObject({ code: 1, err: expect.stringMatching(/no scene "no-such-scene"\. Available: .*quickstart/) });
    expect(await troupe('run', '../etc')).toMatchObject({ code: 1, err: expect.stringMatching(/not a scene name/) });
    expect(await troupe('run')).toMatchObject({ code: 2, err: expect.stringMatching(/needs a scene name/) });
    expect(await troupe('fly')).toMatchObject({ code: 2, err: expect.stringMatching(/unknown command "fly"/) });
    expect(await troupe('run', 'quickstart', '--bogus')).toMatchObject({ code: 2, err: expect.stringMatching(/bogus/) });
    expect(await troupe()).toMatchObject({ code: 2, err: expect.stringMatching(/Usage/) });
  });
});
