import { describe, expect, it } from 'vitest';
import { createBus, defineSkill, defineTool, MAX_SKILL_DEPTH, ToolSchemaError, type Steps, type Tool } from '../../src/index.js';
import { dispatchCalls } from '../../src/tools/index.js';
import { sequentialIds, recordEvents, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, teamTools, toolTrace } from './fixtures.js';

const NO_HANG = { timeout: 5_000 };
const noParameters = { type: 'object', properties: {} } as const;

/** A skill whose one step is whatever `step` does with the roster tools. */
function stepSkill(step: (steps: Steps) => Promise<unknown>) {
  const team = teamTools();
  const skill = defineSkill({ name: 'scout', description: 'Scouts.', parameters: noParameters, tools: [team.lookupPlayer, team.listTeam], run: (_args, steps) => step(steps) });
  return { ...team, skill };
}

async function runOnce(skill: Tool) {
  const provider = scriptedProvider([action('<scout></scout>'), 'Noted.']);
  const { agent, events } = testAgent({ provider, tools: [skill] });
  const result = await agent.run('Scout.');
  provider.assertConsumed();
  return { result, events };
}

describe('failing steps', () => {
  it('fails the skill call when a step’s arguments break the tool’s schema, naming the tool and the issue', async () => {
    const { skill, executed } = stepSkill((steps) => steps.call('list_team', { team: 'green' }));
    const { result, events } = await runOnce(skill);
    const failed = events.find('tool.failed')!;
    expect(failed.data.callId).toBe('tester/1.1.1');
    expect(failed.data.error.kind).toBe('execution');
    expect(failed.data.error.message).toMatch(/^skill "scout" step "list_team" \(tester\/1\.1\.1\/1\) was rejected: Invalid arguments for "list_team": .*team/);
    expect(failed.data.error.message).toContain('red');
    // The rejected step never started; the model reads why in its observation.
    expect(toolTrace(events)).toEqual(['tool.started:tester/1.1.1:scout', 'tool.failed:tester/1.1.1:scout']);
    expect(executed).toEqual([]);
    expect(events.find('agent.observation')!.data.text).toContain('Invalid arguments for "list_team"');
    expect(result.reason).toBe('final_answer');
  });

  it('rejects a step naming a tool the skill does not have, with a suggestion', async () => {
    const { skill } = stepSkill((steps) => steps.call('lookup_players', { player_id: '7' }));
    const { events } = await runOnce(skill);
    expect(events.find('tool.failed')!.data.error.message).toContain('Unknown tool "lookup_players". Did you mean "lookup_player"?');
  });

  it('rejects step arguments that are not JSON data', async () => {
    const { skill } = stepSkill((steps) => steps.call('lookup_player', { player_id: 7n } as never));
    const { events } = await runOnce(skill);
    expect(events.find('tool.failed')!.data.error.message).toMatch(/Arguments for "lookup_player" must be an object of JSON data/);
  });

  it('fails the skill call with the nested failure’s message when a step fails', async () => {
    const { skill } = stepSkill((steps) => steps.call('lookup_player', { player_id: '42' }));
    const { events } = await runOnce(skill);
    expect(toolTrace(events)).toEqual([
      'tool.started:tester/1.1.1:scout',
      'tool.started:tester/1.1.1/1:lookup_player',
      'tool.failed:tester/1.1.1/1:lookup_player',
      'tool.failed:tester/1.1.1:scout',
    ]);
    expect(events.filter('tool.failed')[1]!.data.error).toMatchObject({
      kind: 'execution',
      message: 'skill "scout" step "lookup_player" (tester/1.1.1/1) failed: no player 42',
    });
  });

  it('fails closed when the log cannot record a nested call’s start: the step never runs and the turn stops', async () => {
    const { skill, executed } = stepSkill((steps) => steps.call('lookup_player', { player_id: '7' }));
    const bus = createBus({ ids: sequentialIds() });
    const events = recordEvents(bus);
    const turn = dispatchCalls([{ call: { callId: 'c1', name: 'scout', args: {} }, tool: skill }], {
      signal: new AbortController().signal,
      agent: 'tester',
      bus,
      publish: (type, data) => bus.publish(type, data, { agent: 'tester' }),
      assertRecorded: (event) => {
        if (event.data.callId.includes('/')) throw new Error('disk full');
      },
    });
    await expect(turn).rejects.toThrow('disk full');
    expect(executed).toEqual([]);
    expect(events.filter('tool.failed').map((event) => event.data.callId)).toEqual(['c1/1', 'c1']);
  });
});

describe('the recursion guard', () => {
  it('refuses a step that calls a skill of the same name before it starts', NO_HANG, async () => {
    const { lookupPlayer } = teamTools();
    const inner = defineSkill({ name: 'scout', description: 'Inner.', parameters: noParameters, tools: [lookupPlayer], run: () => 'inner' });
    const outer = defineSkill({ name: 'scout', description: 'Outer.', parameters: noParameters, tools: [inner], run: (_args, steps) => steps.call('scout') });
    const { events } = await runOnce(outer);
    expect(toolTrace(events)).toEqual(['tool.started:tester/1.1.1:scout', 'tool.failed:tester/1.1.1:scout']);
    expect(events.find('tool.failed')!.data.error.message).toBe(
      'skill "scout" cannot call "scout": it is already running in this chain (scout > scout); a skill may not call itself',
    );
  });

  it(`refuses skills nested more than ${MAX_SKILL_DEPTH} deep`, NO_HANG, async () => {
    const leaf = defineTool({ name: 'leaf', description: 'A leaf.', parameters: noParameters, execute: () => 'leaf' });
    let below: Tool = leaf;
    // level_5 calls leaf, level_4 calls level_5, …, scout (the model's call) calls level_2.
    for (const name of ['level_5', 'level_4', 'level_3', 'level_2', 'scout']) {
      const callee = below.name;
      below = defineSkill({ name, description: name, parameters: noParameters, tools: [below], run: (_args, steps) => steps.call(callee) });
    }
    const { events } = await runOnce(below);
    const failures = events.filter('tool.failed');
    // level_5 fails as it starts; each enclosing skill fails with the message of the one below.
    expect(failures.map((event) => event.data.callId)).toEqual([
      'tester/1.1.1/1/1/1/1',
      'tester/1.1.1/1/1/1',
      'tester/1.1.1/1/1',
      'tester/1.1.1/1',
      'tester/1.1.1',
    ]);
    expect(failures[0]!.data.error.message).toBe(
      'skills nest at most 4 deep, and "level_5" would be number 5: scout > level_2 > level_3 > level_4 > level_5',
    );
    expect(failures.at(-1)!.data.error.message).toContain('skills nest at most 4 deep');
    expect(events.filter('tool.started').map((event) => event.data.name)).not.toContain('leaf');
  });

  it('runs a chain of exactly the maximum depth', NO_HANG, async () => {
    const leaf = defineTool({ name: 'leaf', description: 'A leaf.', parameters: noParameters, execute: () => 'leaf' });
    let below: Tool = leaf;
    for (const name of ['level_4', 'level_3', 'level_2', 'scout']) {
      const callee = below.name;
      below = defineSkill({ name, description: name, parameters: noParameters, tools: [below], run: (_args, steps) => steps.call(callee) });
    }
    const { events } = await runOnce(below);
    expect(events.filter('tool.completed').at(-1)!.data).toMatchObject({ callId: 'tester/1.1.1', output: 'leaf' });
  });
});

describe('defineSkill refuses definitions that cannot work', () => {
  const { lookupPlayer } = teamTools();
  const provider = scriptedProvider([]);
  const base = { name: 'scout', description: 'Scouts.', parameters: noParameters };

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['no body', { ...base, tools: [lookupPlayer] }, /exactly one body: .*got none/],
    ['two bodies', { ...base, tools: [lookupPlayer], run: (): number => 1, agent: { provider } }, /exactly one body: .*got run and agent/],
    ['an execute', { ...base, tools: [lookupPlayer], run: (): number => 1, execute: (): number => 1 }, /a skill has no execute/],
    ['a misspelt option', { ...base, tools: [lookupPlayer], runn: (): number => 1 }, /unknown option "runn"; did you mean "run"\?/],
    ['a workflow without tools', { ...base, run: (): number => 1 }, /needs tools/],
    ['a step naming a missing tool', { ...base, tools: [lookupPlayer], steps: [{ tool: 'lookup_playr' }] }, /steps\[0\]\.tool "lookup_playr" .*did you mean "lookup_player"/],
    ['tools beside an agent', { ...base, tools: [lookupPlayer], agent: { provider } }, /agent: \{ tools \}/],
    ['a child name', { ...base, agent: { provider, name: 'x' } }, /agent\.name is set by the skill/],
    ['a bad skill name', { ...base, name: 'bad name', run: (): number => 1, tools: [] }, /skill name "bad name"/],
  ])('%s', (_label, definition, message) => {
    expect(() => defineSkill(definition as never)).toThrow(ToolSchemaError);
    expect(() => defineSkill(definition as never)).toThrow(message);
  });

  it('checks the child agent’s options at once', () => {
    expect(() => defineSkill({ ...base, agent: { provider, maxRounds: 0 } })).toThrow(/maxRounds must be a positive integer/);
  });
});
