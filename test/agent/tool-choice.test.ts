import { describe, expect, it } from 'vitest';
import { ConfigError, createAgent, scriptedProvider, type Envelope } from '../../src/index.js';
import { rosterTools } from './fixtures.js';

const LOOKUP = '<ACTION><lookup_player><player_id>7</player_id></lookup_player></ACTION>';
const SET_TEAM = '<ACTION><set_team><player_id>7</player_id><team>blue</team></set_team></ACTION>';

function observe(agent: ReturnType<typeof createAgent>) {
  const texts: string[] = [];
  agent.bus.on('agent.observation', (event: Envelope<'agent.observation'>) => void texts.push(event.data.text));
  return texts;
}

describe('toolChoice with the XML protocol', () => {
  it('required: an answer before any call is a correction; once a call has run the model may answer', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider(['Ana, I think.', LOOKUP, 'Player 7 is Ana.']);
    const agent = createAgent({ name: 'ref', tools, provider, toolChoice: 'required' });
    const observed = observe(agent);
    const result = await agent.run('Who is 7?');
    expect(observed[0]).toBe('A tool call is required now, and your reply made none. Call one of your tools. Write one block: <ACTION><tool_name><param>value</param></tool_name></ACTION>.');
    expect(executed).toEqual(['lookup_player:7']);
    expect(result).toMatchObject({ reason: 'final_answer', text: 'Player 7 is Ana.', rounds: 3 });
  });

  it('required: corrections run out when the model never calls', async () => {
    const { tools } = rosterTools();
    const agent = createAgent({ name: 'ref', tools, provider: scriptedProvider(['No.', 'No.', 'No.']), toolChoice: 'required', maxCorrections: 3 });
    expect(await agent.run('Who is 7?')).toMatchObject({ reason: 'error', error: 'the model made 3 invalid rounds in a row (maxCorrections 3)' });
  });

  it('none: the manifest leaves the tools out and a call is refused', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([LOOKUP, 'Ana.']);
    const agent = createAgent({ name: 'ref', instructions: 'You referee.', tools, provider, toolChoice: 'none' });
    const rejected: Envelope<'tool.rejected'>[] = [];
    agent.bus.on('tool.rejected', (event) => void rejected.push(event));
    const result = await agent.run('Who is 7?');
    expect(provider.requests[0]!.messages[0]).toEqual({ role: 'system', content: 'You referee.' });
    expect(executed).toEqual([]);
    expect(rejected[0]!.data).toMatchObject({ name: 'lookup_player', code: 'not_permitted' });
    expect(result).toMatchObject({ reason: 'final_answer', text: 'Ana.' });
  });

  it('a named tool: only it is shown and callable, and an answer without it is corrected', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([LOOKUP, SET_TEAM, 'Moved.']);
    const agent = createAgent({ name: 'ref', tools, provider, toolChoice: { tool: 'set_team' }, maxCorrections: 2 });
    const observed = observe(agent);
    await agent.run('Move 7 to blue.');
    const system = provider.requests[0]!.messages[0]!.content as string;
    expect(system).toContain('set_team');
    expect(system).not.toContain('lookup_player');
    expect(observed[0]).toMatch(/lookup_player .*not_permitted/);
    expect(executed).toEqual(['set_team:7:blue']);
  });

  it('refuses a choice that names no tool of the agent, or means nothing', () => {
    const { tools } = rosterTools();
    const make = (toolChoice: unknown) => () => createAgent({ name: 'ref', tools, provider: scriptedProvider([]), toolChoice: toolChoice as never });
    expect(make({ tool: 'fly' })).toThrow(new ConfigError('createAgent "ref": toolChoice names "fly", which it cannot call (its tools: lookup_player, set_team)'));
    expect(make('always')).toThrow(/toolChoice must be 'auto', 'required', 'none' or \{ tool: name \}, got "always"/);
  });
});

describe('toolChoice with native calls', () => {
  it('sends a named tool to the provider and keeps every tool declared', async () => {
    const { tools } = rosterTools();
    const provider = scriptedProvider([{ text: '', toolCalls: [{ id: 'c1', name: 'set_team', arguments: '{"player_id":"7","team":"blue"}' }] }, 'Moved.']);
    const agent = createAgent({ name: 'ref', tools, provider, protocol: 'native', toolChoice: { tool: 'set_team' } });
    await agent.run('Move 7 to blue.');
    expect(provider.requests[0]!.toolChoice).toEqual({ tool: 'set_team' });
    expect(provider.requests[0]!.tools!.map((tool) => tool.name)).toEqual(['lookup_player', 'set_team']);
  });
});
