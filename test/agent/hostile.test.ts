import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { rosterTools } from './fixtures.js';

const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort();

// Pieces a hostile or confused model might put together.
const fragments = fc.constantFrom(
  '<ACTION>', '</ACTION>', '<ACTION/>', '<lookup_player>', '</lookup_player>', '<player_id>', '</player_id>',
  '<set_team>', '<team>blue</team>', '<__proto__>', '<constructor>x</constructor>', '<![CDATA[', ']]>',
  '<!DOCTYPE x [<!ENTITY a "b">]>', '&amp;', '&#0;', '\u0000', '\uD800', '```', '`', '<think>', '</think>',
  '<!--', '-->', '<OBSERVATION>', '{"player_id":"7"}', '7', ' ', '\n', 'x'.repeat(50),
);

describe('hostile model output through the public API', () => {
  it('any output ends the run with a reason: no throw, no hang, no pollution', async () => {
    const before = prototypeKeys();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ maxLength: 40 }), fragments), { maxLength: 30 }).map((parts) => parts.join('')),
        async (output) => {
          const { tools } = rosterTools();
          const provider = scriptedProvider([output, output, 'fine']);
          const { agent, events } = testAgent({ provider, tools, maxCorrections: 2 });
          const result = await agent.run('go');
          expect(['final_answer', 'error']).toContain(result.reason);
          expect(events.types().at(-1)).toBe('agent.finished');
          for (const event of events.filter('action.malformed')) expect(event.data.code).toMatch(/^[a-z_]+$/);
        },
      ),
      { numRuns: 150 },
    );
    expect(prototypeKeys()).toEqual(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('huge hostile turns become a correction and a plain answer, not a crash', async () => {
    const provider = scriptedProvider([`<ACTION>${'<a>'.repeat(200_000)}</ACTION>`, '<'.repeat(1_000_000)]);
    const { agent, events } = testAgent({ provider, tools: rosterTools().tools });
    const result = await agent.run('go');
    expect(events.find('action.malformed')!.data.code).toBe('limit_exceeded');
    expect(result.reason).toBe('final_answer');
    expect(result.text).toHaveLength(1_000_000);
    expect(events.types()).not.toContain('tool.started');
  });
});
