import { defineScene } from '../../src/index.js';
import { buildCrowd, crowdSummary, MAX_NPCS } from './build-crowd.js';

export { buildCrowd, crowdSummary, MAX_NPCS, type CrowdOptions, type CrowdScene } from './build-crowd.js';

/**
 * `troupe run crowd --npcs 100000`: N identical NPCs wandering a town square, every one
 * deliberating every tick through the full parse → validate → dispatch → observe cycle on a
 * zero-latency scripted brain. The summary reports agent-steps per second.
 */
export const scene = defineScene({
  description: 'N identical NPCs wander a town square, one tool call each per tick: the scale benchmark',
  ticks: 5,
  options: {
    npcs: { type: 'number', default: 1_000, min: 1, max: MAX_NPCS, integer: true, description: 'how many NPCs' },
  },
  create: ({ options, ...context }) => buildCrowd({ ...context, npcs: options.npcs as number }),
  summarize: crowdSummary,
});
