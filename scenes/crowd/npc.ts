import { defineTool, type Brain, type Tool } from '../../src/index.js';

/** Half the side of the town square: positions stay within ±`SQUARE`. */
export const SQUARE = 50;

/** Where an NPC stands. */
export type Position = { x: number; y: number };

/** What a crowd has done so far: counted by its one shared `wander` tool. */
export type CrowdCensus = { steps: number; farthest: number; startedAt: number | undefined; wallMs: number | undefined };

const step = { type: 'integer', minimum: -1, maximum: 1 } as const;
const coordinate = { type: 'integer', minimum: -SQUARE, maximum: SQUARE } as const;

/**
 * The crowd's one tool: a step from where the NPC stands, kept inside the square. It returns the
 * new position instead of writing it anywhere: the NPC reads it back from its next perception's
 * observation, so a hundred thousand walkers cost no world writes and no private state.
 */
export function wanderTool(census: CrowdCensus): Tool {
  return defineTool({
    name: 'wander',
    description: 'Take one step across the town square from where you stand.',
    parameters: {
      type: 'object',
      properties: { x: coordinate, y: coordinate, dx: step, dy: step },
      required: ['x', 'y', 'dx', 'dy'],
      additionalProperties: false,
    },
    execute: (args) => {
      const { x, y, dx, dy } = args as Position & { dx: number; dy: number };
      const next = { x: clamp(x + dx), y: clamp(y + dy) };
      census.steps++;
      const distance = Math.max(Math.abs(next.x), Math.abs(next.y));
      if (distance > census.farthest) census.farthest = distance;
      return next;
    },
  });
}

function clamp(value: number): number {
  return value < -SQUARE ? -SQUARE : value > SQUARE ? SQUARE : value;
}

/**
 * Every NPC's brain, one function for the whole crowd: no closure per NPC, so the cast caches one
 * provider for all of them. Its state is the last observation (where the last step ended); its
 * dice are the agent's seeded `random()`. Exactly one call per turn, written as a model would.
 */
export const wanderer: Brain = (perception) => {
  const last = perception.observation?.calls[0];
  let x: number;
  let y: number;
  if (last?.status === 'completed') {
    ({ x, y } = last.output as Position);
  } else {
    // First turn (or a step that went wrong): somewhere near the middle of the square.
    x = Math.floor(perception.random() * 21) - 10;
    y = Math.floor(perception.random() * 21) - 10;
  }
  const dx = Math.floor(perception.random() * 3) - 1;
  const dy = Math.floor(perception.random() * 3) - 1;
  return `<ACTION><wander><x>${x}</x><y>${y}</y><dx>${dx}</dx><dy>${dy}</dy></wander></ACTION>`;
};
