import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLog } from '../../src/record/index.js';
import { act, noteTool, recordedScene } from './helpers.js';

describe('a scene with a session log', () => {
  it('writes every event of every agent to one JSONL file, and closes it when the scene stops', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'troupe-scene-')), 'tavern.jsonl');
    const { tool } = noteTool();
    const { scene, events } = recordedScene({ schedule: 'every-tick', log: path });
    scene.add({ name: 'a', tools: [tool], brain: (p) => act('note', { text: `a${p.tick}` }) });
    scene.add({ name: 'b', tools: [tool], brain: (p) => act('note', { text: `b${p.tick}` }) });
    await scene.run({ ticks: 2 });

    const logged = await readLog(path);
    expect(logged.events[0]).toMatchObject({ type: 'log.opened', data: { kind: 'run' } });
    expect(logged.events.slice(1).map((event) => event.id)).toEqual(events.map((event) => event.id));
    expect(logged.events.filter((event) => event.type === 'tool.started')).toHaveLength(4);
    expect(logged.events.at(-1)!.type).toBe('scene.stopped');
  });
});
