import { describe, expect, it } from 'vitest';
import { createBus } from '../../src/index.js';
import { sequentialIds, steppedClock, recordEvents } from '../../src/testing/index.js';
import { quartermaster } from '../../scenes/quickstart/index.js';

describe('determinism', () => {
  it('a scripted run with injected ids and clock gives the same events every time', async () => {
    const once = async () => {
      const bus = createBus({ ids: sequentialIds(), clock: steppedClock(0, 1) });
      const events = recordEvents(bus);
      const { agent } = quartermaster(bus);
      await agent.run('Mara needs a rope.');
      await agent.close();
      return JSON.stringify(events.all);
    };
    const first = await once();
    expect(await once()).toBe(first);
    expect(first).toContain('"tool.rejected"');
    expect(first).toContain('"give_item"');
  });
});
