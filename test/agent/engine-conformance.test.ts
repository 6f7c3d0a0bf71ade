import { describe, expect, it } from 'vitest';
import { defineTool, type Agent, type AgentEngine, type AgentOptions, type Envelope, type Provider, type RepairFunction } from '../../src/index.js';
import { deferred, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

// The suite's agent scenarios run once per engine, with the same script and seed: the compiled
// table and XState's interpreter must publish the same events, in the same order, and resolve the
// same results. Ids, timestamps and durations are left out; causes are compared as positions.

type Outcome = { events: unknown[]; results: unknown[] };
type Scenario = (engine: AgentEngine) => Promise<Outcome>;

const TIMING = /(Ms|At)$|^at$/;

/** A value without its timings (durations, timestamps), which no two runs need share. */
function untimed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(untimed);
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !TIMING.test(key)).map(([key, inner]) => [key, untimed(inner)]));
}

/** The bus as a list of types and data, each cause named by the position of the event it follows. */
function comparable(all: readonly Envelope[]): unknown[] {
  const position = new Map(all.map((event, index) => [event.id, index]));
  return all.map((event) => ({
    type: event.type,
    agent: event.agent,
    scene: event.scene,
    cause: event.cause === undefined ? undefined : (position.get(event.cause) ?? 'outside'),
    data: untimed(event.data),
  }));
}

/** Runs `drive` on an agent of `engine` made from `options`, recording its bus. */
async function scenario(
  engine: AgentEngine,
  options: Partial<AgentOptions> & Pick<AgentOptions, 'provider'>,
  drive: (agent: Agent) => Promise<unknown[]> = async (agent) => [await agent.run('go')],
): Promise<Outcome> {
  const { agent, events } = testAgent({ seed: 7, ...options, engine });
  const results = await drive(agent);
  return { events: comparable(events.all), results: results.map(untimed) };
}

function gated(name: string, options: { needsApproval?: boolean; needsResultApproval?: boolean }) {
  return defineTool({
    name,
    description: 'A gated call.',
    parameters: { type: 'object', properties: { amount: { type: 'integer' } } },
    ...options,
    execute: ({ amount }) => `moved ${String(amount)}`,
  });
}

function hangingTool() {
  const started = deferred();
  const tool = defineTool({
    name: 'slow_scan',
    description: 'Scans slowly.',
    parameters: { type: 'object', properties: { area: { type: 'string' } } },
    readOnly: true,
    execute: (_args, { signal }) => {
      started.resolve();
      return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    },
  });
  return { tool, started };
}

const lookup = action(call('lookup_player', { player_id: '7' }));
const renameToSuggestion: RepairFunction = (rejection, context) =>
  rejection.code === 'unknown_tool' && rejection.suggestion !== undefined ? { name: rejection.suggestion, args: context.call.args } : undefined;

/** How each scenario's runs end, so that none of them passes by doing less than it says. */
const REASONS: Record<string, string[]> = {
  'a final answer': ['final_answer'],
  'corrections run out': ['error'],
  'an abort mid-dispatch': ['aborted'],
  'an abort from an agent.said subscriber': ['aborted'],
  'a model failure': ['error'],
  'budget exhaustion': ['budget'],
  'the maxRounds nudge': ['max_rounds'],
  'a scene turn of one round': ['turn_ended', 'final_answer'],
  'memory across two runs': ['final_answer', 'final_answer'],
  'a stage that throws, then a run started from agent.finished': ['error', 'final_answer'],
  'a snapshot mid-approval, resumed in a new agent': ['final_answer', 'done'],
};

const scenarios: Record<string, Scenario> = {
  'a final answer': (engine) => scenario(engine, { provider: scriptedProvider(['The answer is 42.']) }),
  'one tool call': (engine) => scenario(engine, { provider: scriptedProvider([`Looking. ${lookup}`, 'Ana.']), tools: rosterTools().tools }),
  'two calls in one block, one failing': (engine) =>
    scenario(engine, { provider: scriptedProvider([action(call('lookup_player', { player_id: '9' }), call('set_team', { player_id: '3', team: 'red' })), 'Hm.']), tools: rosterTools().tools }),
  'a malformed <ACTION>, then the correction': (engine) =>
    scenario(engine, { provider: scriptedProvider(['<ACTION><lookup_player><player_id>7</lookup_player></ACTION>', lookup, 'Ana.']), tools: rosterTools().tools }),
  'corrections run out': (engine) =>
    scenario(engine, { provider: scriptedProvider(['<ACTION><x>', '<ACTION><y>', '']), tools: rosterTools().tools, maxCorrections: 3 }),
  'an unknown tool': (engine) => scenario(engine, { provider: scriptedProvider([action(call('lookup_playr', { player_id: '7' })), 'Sorry.']), tools: rosterTools().tools }),
  'invalid arguments': (engine) =>
    scenario(engine, { provider: scriptedProvider([action(call('set_team', { player_id: '7', team: 'green' })), 'Sorry.']), tools: rosterTools().tools }),
  'approvals: approved from the request handler, denied after an await': (engine) =>
    scenario(
      engine,
      { provider: scriptedProvider([action('<pay><amount>5</amount></pay>'), action('<pay><amount>500</amount></pay>'), 'Done.']), tools: [gated('pay', { needsApproval: true })] },
      async (agent) => {
        let asked = 0;
        agent.bus.on('tool.approval.requested', (event) => {
          if (++asked === 1) agent.approve(event.data.callId);
          else void Promise.resolve().then(() => agent.deny(event.data.callId, 'too much'));
        });
        return [await agent.run('Pay twice.')];
      },
    ),
  'result approval: approved, then rejected': (engine) =>
    scenario(
      engine,
      { provider: scriptedProvider([action('<read><amount>1</amount></read>'), action('<read><amount>2</amount></read>'), 'Done.']), tools: [gated('read', { needsResultApproval: true })] },
      async (agent) => {
        agent.bus.on('tool.result.approval.requested', (event) => {
          if (event.data.args['amount'] === 1) agent.approveResult(event.data.callId);
          else agent.rejectResult(event.data.callId, 'secret');
        });
        return [await agent.run('Read twice.')];
      },
    ),
  'a call and its result both gated': (engine) =>
    scenario(engine, { provider: scriptedProvider([action('<both><amount>3</amount></both>'), 'Done.']), tools: [gated('both', { needsApproval: true, needsResultApproval: true })] }, async (agent) => {
      agent.bus.on('tool.approval.requested', (event) => void agent.approve(event.data.callId));
      agent.bus.on('tool.result.approval.requested', (event) => void setTimeout(() => agent.approveResult(event.data.callId), 1));
      return [await agent.run('Go.')];
    }),
  'a repair hook, at once and awaited': (engine) =>
    scenario(engine, {
      provider: scriptedProvider([action(call('lookup_playr', { player_id: '7' })), action(call('lookup_plyer', { player_id: '9' })), 'Ana and Bo.']),
      tools: rosterTools().tools,
      repair: (rejection, context) => (context.round === 1 ? renameToSuggestion(rejection, context) : Promise.resolve(renameToSuggestion(rejection, context))),
    }),
  'a repair that fails': (engine) =>
    scenario(engine, { provider: scriptedProvider([action(call('lookup_playr', { player_id: '7' })), 'Sorry.']), tools: rosterTools().tools, repair: () => ({ name: 'nowhere', args: {} }) }),
  'an abort mid-dispatch': (engine) => {
    const { tool, started } = hangingTool();
    return scenario(engine, { provider: scriptedProvider([action(call('slow_scan', { area: 'north' })), 'unused']), tools: [tool] }, async (agent) => {
      const running = agent.run('Scan.');
      await started.promise;
      agent.abort('stop scanning');
      return [await running];
    });
  },
  'an abort from an agent.said subscriber': (engine) =>
    scenario(engine, { provider: scriptedProvider([`Looking. ${lookup}`]), tools: rosterTools().tools }, async (agent) => {
      agent.bus.once('agent.said', () => agent.abort());
      return [await agent.run('go')];
    }),
  'a model failure': (engine) => scenario(engine, { provider: scriptedProvider([{ error: { kind: 'auth', message: '401 bad key' } }]) }),
  'a retried model failure': (engine) =>
    scenario(engine, { provider: scriptedProvider([{ error: { kind: 'server', message: '502' } }, 'Back.']), modelRetry: { attempts: 2, backoffMs: 2 } }),
  'budget exhaustion': (engine) => scenario(engine, { provider: scriptedProvider([lookup, 'unused']), tools: rosterTools().tools, budget: { modelCalls: 1 } }),
  'the maxRounds nudge': (engine) =>
    scenario(engine, { provider: scriptedProvider([lookup, lookup, `Still looking. ${lookup}`]), tools: rosterTools().tools, maxRounds: 2 }),
  'a scene turn of one round': (engine) =>
    scenario(engine, { provider: scriptedProvider([lookup, 'Ana.']), tools: rosterTools().tools }, async (agent) => [await agent.run('go', { rounds: 1 }), await agent.run('go on', { rounds: 1 })]),
  'the native protocol': (engine) =>
    scenario(engine, {
      protocol: 'native',
      tools: rosterTools().tools,
      provider: scriptedProvider([
        { text: 'Both.', toolCalls: [{ id: 'a', name: 'lookup_player', arguments: '{"player_id":"7"}' }, { id: 'b', name: 'lookup_player', arguments: '{"player_id":' }] },
        'Ana.',
      ]),
    }),
  'memory across two runs': (engine) =>
    scenario(engine, { provider: scriptedProvider([lookup, 'Ana.', 'Red.']), tools: rosterTools().tools, memory: true }, async (agent) => [
      await agent.run('Who is 7?'),
      await agent.run('Which team?'),
    ]),
  'a stage that throws, then a run started from agent.finished': (engine) => {
    let exploded = false;
    const provider: Provider = scriptedProvider(['hello']);
    Object.defineProperty(provider, 'name', {
      get() {
        if (exploded) return 'scripted';
        exploded = true;
        throw new Error('provider name exploded');
      },
    });
    return scenario(engine, { provider }, async (agent) => {
      const second = new Promise((resolve) => agent.bus.once('agent.finished', () => void agent.run('again').then(resolve)));
      return [await agent.run('hi'), await second];
    });
  },
  'a snapshot mid-approval, resumed in a new agent': async (engine) => {
    const tools = [gated('pay', { needsApproval: true })];
    const first = testAgent({ seed: 7, engine, tools, provider: scriptedProvider([action('<pay><amount>5</amount></pay>'), 'Paid.']) });
    const asked = new Promise((resolve) => first.agent.bus.once('tool.approval.requested', resolve));
    void first.agent.run('Pay.');
    await asked;
    const saved = JSON.parse(JSON.stringify(first.agent.snapshot()));
    const { agent, events } = testAgent({ seed: 7, engine, tools, provider: scriptedProvider(['Paid.']) });
    const result = agent.resume(saved);
    agent.approve(agent.pendingApprovals()[0]!.callId);
    const results = [untimed(await result), agent.state];
    return { events: [...comparable(first.events.all), ...comparable(events.all)], results };
  },
};

describe("engine: 'xstate' against the compiled table", () => {
  for (const [name, run] of Object.entries(scenarios)) {
    it(`publishes the same events and results: ${name}`, async () => {
      const compiled = await run('compiled');
      const xstate = await run('xstate');
      expect(compiled.results.map((result) => (result as { reason?: string }).reason ?? result)).toEqual(REASONS[name] ?? ['final_answer']);
      expect(compiled.events.length).toBeGreaterThan(3);
      expect(xstate.events).toEqual(compiled.events);
      expect(xstate.results).toEqual(compiled.results);
    });
  }
});
