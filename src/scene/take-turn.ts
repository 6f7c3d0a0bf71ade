import type { Logger } from 'pino';
import type { RunResult } from '../agent/agent-options.js';
import type { Bus } from '../bus/bus.js';
import type { RunReason } from '../bus/events.js';
import { callImages } from '../agent/observation-text.js';
import { perceptionText } from './perception-text.js';
import type { SceneMember } from './scene-member.js';
import type { Perception } from './types.js';
import type { WorldReader } from './world-types.js';

/** What a turn needs of its scene, and whom it tells that it ended. */
export type TurnStage = {
  readonly name: string;
  readonly bus: Bus;
  readonly world: WorldReader;
  readonly logger: Logger;
  /** The callback of every member's runs: the scene's one function, which finds the member by name. */
  readonly ranTurn: (result: RunResult, agent: string) => void;
  turnEnded(ended: RunReason): void;
};

/** What a brain-driven agent gets as its run input: its brain reads the perception object instead. */
const BRAIN_INPUT = '(perception given to the brain)';
const NO_IMAGES: readonly never[] = Object.freeze([]);

/**
 * One agent's turn: `agent.triggered`, then one run of the agent cycle on what it perceived,
 * bounded by its `rounds`. Once the run ended — synchronously when the whole turn could finish at
 * once — counts how in `outcomes`, tells `stage.turnEnded` and calls `done`. Never throws, so one
 * agent's failure (a brain that throws, a provider that fails, a closed agent) never stops the others.
 *
 * No closure is made per turn, nor kept per member: the member keeps what its end needs, and the
 * scene's one callback finds it. A round may hold a million turns in flight, and whatever each
 * holds is copied by every minor collection it lives through.
 */
export function takeTurn(stage: TurnStage, member: SceneMember, tick: number, outcomes: Partial<Record<RunReason, number>>, done: () => void): void {
  member.turnOutcomes = outcomes;
  member.turnDone = done;
  const { reason, detail, cause } = member.trigger!;
  try {
    const triggered = stage.bus.publish(
      'agent.triggered',
      detail === undefined ? { reason, tick } : { reason, detail, tick },
      { agent: member.name, scene: stage.name, cause },
    );
    const input = member.scripted ? BRAIN_INPUT : perceptionText(openingPerception(member, tick, stage.world));
    // The images of the last observation (rich tool results) come with the perception; memory keeps
    // the observation's text but no image bytes, so a member with memory gets them here too.
    const images = member.scripted || member.lastObservation === undefined ? NO_IMAGES : member.lastObservation.calls.flatMap(callImages);
    const options = images.length > 0 ? { rounds: member.rounds, cause: triggered.id, images } : { rounds: member.rounds, cause: triggered.id };
    member.runtime.runWith(input, options, stage.ranTurn);
  } catch (error) {
    // A host error (the agent was closed, or run by the host at the same time).
    stage.logger.error({ agent: member.name, err: error }, 'scene turn failed');
    endTurn(stage, member, 'error', member.lastObservation);
  }
}

/** A member's run ended: what `stage.ranTurn` does once it has found the member. */
export function ranTurn(stage: TurnStage, member: SceneMember, result: RunResult): void {
  member.spend(result.usage);
  endTurn(stage, member, result.reason, result.observation);
}

function endTurn(stage: TurnStage, member: SceneMember, ended: RunReason, observation: SceneMember['lastObservation']): void {
  // The last round's outcome opens the next turn: an observation always feeds the next deliberation.
  member.lastObservation = observation;
  if (ended === 'budget' && member.budget?.exhausted !== undefined) member.retired = true;
  member.busy = false;
  member.lastReason = ended;
  const outcomes = member.turnOutcomes!;
  const done = member.turnDone!;
  member.turnOutcomes = undefined;
  member.turnDone = undefined;
  outcomes[ended] = (outcomes[ended] ?? 0) + 1;
  stage.turnEnded(ended);
  done();
}

/**
 * What a model-driven member perceives as its turn opens. An agent with memory already has its last
 * observation in the history it is sent (whole, or as an execution-log line): it is not repeated.
 */
function openingPerception(member: SceneMember, tick: number, world: WorldReader): Perception {
  const perception = member.perceive({ round: 1 }, tick, world);
  return member.runtime.memory === undefined ? perception : { ...perception, observation: undefined };
}
