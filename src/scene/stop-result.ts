import type { TroupeEvents } from '../bus/events.js';
import type { SceneResult, SceneStopReason } from './types.js';

const KNOWN_REASONS: readonly string[] = ['ticks', 'quiet', 'stopped', 'budget', 'signal'];

/**
 * How a scene stopped, as `scene.stop` resolves it and `scene.stopped` says it. A host's own
 * reason (`stop('closing time')`) is reported as `stopped`, and the words become the detail.
 */
export function stopResult(
  reason: string,
  detail: string | undefined,
  counts: Omit<SceneResult, 'reason' | 'detail'>,
): { result: SceneResult; stopped: TroupeEvents['scene.stopped'] } {
  const known = KNOWN_REASONS.includes(reason);
  const result: SceneResult = { reason: (known ? reason : 'stopped') as SceneStopReason, ...counts };
  const why = detail ?? (known ? undefined : reason);
  if (why !== undefined) result.detail = why;
  const stopped = why === undefined ? { tick: counts.tick, reason: result.reason } : { tick: counts.tick, reason: result.reason, detail: why };
  return { result, stopped };
}
