import { mkdtempSync, readFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent, scriptedProvider } from '../../src/index.js';
import { createSessionLog, readLog } from '../../src/record/index.js';
import { action, call, rosterTools } from './fixtures.js';

const tempLog = () => join(mkdtempSync(join(tmpdir(), 'troupe-agent-log-')), 'run.jsonl');

describe('createAgent({ log })', () => {
  it('appends every bus event, tool.started before tool.completed', async () => {
    const path = tempLog();
    const provider = scriptedProvider([action(call('lookup_player', { player_id: '7' })), 'Ana.']);
    const agent = createAgent({ name: 'ref', tools: rosterTools().tools, provider, log: path });
    await agent.run('Who is 7?');
    await agent.close();
    const { header, events, quarantined } = readLog(path);
    expect(header.format).toBe('troupe-log');
    expect(quarantined).toEqual([]);
    const types = events.map((event) => event.type);
    expect(types.slice(0, 3)).toEqual(['log.opened', 'agent.spawned', 'run.started']);
    expect(types.at(-1)).toBe('agent.finished');
    expect(types.indexOf('tool.started')).toBeLessThan(types.indexOf('tool.completed'));
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(events.length + 1);
  });

  it('fails closed: no tool runs when its tool.started cannot be recorded', async () => {
    const path = tempLog();
    let full = false;
    const log = createSessionLog(path, {
      fs: {
        writeSync: (fd, buffer, offset, length) => {
          if (full) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
          return writeSync(fd, buffer, offset, length);
        },
      },
    });
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([action(call('lookup_player', { player_id: '7' })), 'unused']);
    const agent = createAgent({ name: 'ref', tools, provider, log });
    agent.bus.once('action.parsed', () => {
      full = true;
    });
    const result = await agent.run('Who is 7?');
    expect(result.reason).toBe('error');
    expect(result.error).toMatch(/dispatch failed/);
    expect(executed).toEqual([]);
    await log.close();
  });
});
