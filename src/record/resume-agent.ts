import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { Agent, AgentOptions, RunResult } from '../agent/agent-options.js';
import { makeAgent } from '../agent/create-agent.js';
import { createBus } from '../bus/bus.js';
import type { Envelope } from '../bus/events.js';
import { sequentialIds } from '../bus/ids.js';
import { TroupeError } from '../errors.js';
import { readLogStart } from './log-reader.js';
import { replayable } from './log-segments.js';
import { recordedProvider } from './recorded-provider.js';
import { createRedactor } from './redact.js';
import { ReplayDriver, type ReplayTarget } from './replay-driver.js';
import { describeDivergence, firstOpened, refuser, untamperedTail } from './resume-scene.js';
import { createSessionLog, type SessionLog, type SessionLogOptions } from './session-log.js';

/** The options of `resumeAgent`: the agent's own, as it was made when the log was written. */
export type ResumeAgentOptions = Omit<AgentOptions, 'log' | 'bus'> & {
  /** Called once the log is used up and the run goes on live, before waiting approvals are requested again. */
  onLive?: (agent: Agent) => void;
  /** Options of the log as it goes on being written. */
  log?: Omit<SessionLogOptions, 'mode' | 'accept' | 'lines' | 'recipe'>;
};

/** A single agent's run, continued from its log. */
export type ResumedAgent = {
  /** The agent, made again, which the log goes on recording. */
  agent: Agent;
  /** The result of the run the log had left unfinished. */
  result: RunResult;
  /** Events of the log replayed before the run went on live. */
  replayed: number;
  /** The log, still open for the agent's next runs: close it when done. */
  log: SessionLog;
};

/**
 * Continues the run of one agent (made with `createAgent({ log })`) that its log left unfinished:
 * the agent is made again from the same options, each run the log holds is run again in lockstep
 * with it (the model's replies and the calls' outcomes from the log, as for a scene), and the
 * last goes on live to its end, appended to the same log. A call that was running when the
 * process died runs again only when its tool is read-only or idempotent; approvals that waited
 * are requested again. A run started with images cannot be continued (the log keeps no image
 * bytes of inputs). Throws `TroupeError` (`resume_refused`, `replay_diverged`) as `resumeScene` does.
 *
 * @example
 * const { result, log } = await resumeAgent('runs/referee.jsonl', { name: 'referee', tools, provider });
 * await log.close();
 */
export async function resumeAgent(logPath: string, options: ResumeAgentOptions): Promise<ResumedAgent> {
  const path = resolve(logPath);
  const refuse = refuser('resume', path);
  const { header, start, text } = readLogStart(path);
  // The run this resume continues, named in its `log.opened` as a scene's resume names it.
  const resumes = firstOpened(text)?.data.run;
  const tail = untamperedTail(path, header, start, refuse);
  const plan = replayable(tail.events, tail.lines);
  if (plan.events.some((event) => event.type === 'scene.started')) return refuse('it records a scene: continue it with resumeScene (troupe resume)');
  const runs = plan.events.filter((event): event is Envelope<'run.started'> => event.type === 'run.started' && event.agent === options.name);
  if (runs.length === 0) return refuse(`it records no run of agent "${options.name}"`);
  const lastStarted = plan.events.findLastIndex((event) => event.type === 'run.started' && event.agent === options.name);
  const lastFinished = plan.events.findLastIndex((event) => event.type === 'agent.finished' && event.agent === options.name);
  if (lastFinished > lastStarted) return refuse(`the last run of agent "${options.name}" finished: there is nothing to resume`);
  const withImages = runs.find((run) => (run.data.images ?? 0) > 0);
  if (withImages !== undefined) return refuse(`run ${withImages.data.number} of agent "${options.name}" started with images, which the log does not keep`);

  const driver = new ReplayDriver('resume', plan.events, plan.lines, createRedactor({ secrets: options.log?.redact ?? [] }), sequentialIds(`${options.name}-r${randomUUID().slice(0, 8)}`));
  let goneLive = false;
  const log = createSessionLog(path, {
    ...options.log,
    mode: 'append',
    lines: (tail.lines.at(-1) ?? start.line) + (tail.quarantined.length > 0 ? 1 : 0),
    accept: (event) => {
      if (!driver.accept(event)) return false;
      if (!goneLive) {
        goneLive = true;
        log.record({ id: `log-${log.run}`, type: 'log.opened', at: Date.now(), data: { run: log.run, kind: 'resume', ...(resumes !== undefined && { resumes }) } } as Envelope<'log.opened'>);
      }
      return true;
    },
  });
  const { onLive, log: _logOptions, ...agentOptions } = options;
  const bus = createBus({ ids: driver.ids, tap: driver.tap });
  driver.follow();
  const agent = makeAgent({ ...agentOptions, bus, log, provider: recordedProvider(options.provider, driver) }, { journal: (call, attempt) => driver.attempt(call, attempt) });
  const target: ReplayTarget = {
    agent: (name) => (name === agent.name ? agent : undefined),
    publish: (event) => void bus.publish(event.type, event.data as never, { agent: event.agent, scene: event.scene, cause: event.cause }),
    applyWorld: () => undefined,
    applyPrivate: () => undefined,
    requestApprovalsAgain: () => agent.requestApprovalsAgain(),
  };
  driver.begin(target);
  void driver.done.then(() => {
    if (driver.divergence !== undefined) return agent.abort('the run left its log');
    onLive?.(agent);
    agent.requestApprovalsAgain();
  });
  try {
    let result: RunResult | undefined;
    for (const run of runs) {
      if (driver.divergence !== undefined) break;
      const { input, messages, rounds } = run.data;
      result = await agent.run(messages === undefined ? input : [...messages, { role: 'user', content: input }], rounds === undefined ? {} : { rounds });
    }
    if (driver.divergence !== undefined) throw new TroupeError('replay_diverged', `cannot resume ${path}: ${describeDivergence(driver.divergence)}`);
    return { agent, result: result!, replayed: plan.events.length, log };
  } catch (error) {
    await log.close();
    throw error;
  }
}
