import type { Envelope } from '../bus/events.js';
import type { SessionLog } from './session-log.js';

/**
 * A log that is a write-ahead check and nothing more: for an agent whose events something else
 * already records (a parent agent's log, a Redis journal), so that attaching a real log again
 * would not write every event twice. Only `tool.started` is checked.
 */
export function writeAheadCheck(assertRecorded: (event: Envelope<'tool.started'>) => void | Promise<void>, where: string): SessionLog {
  return {
    path: where,
    run: where,
    failure: undefined,
    attach: () => () => {},
    record: () => false,
    assertRecorded: (event) => (event.type === 'tool.started' ? assertRecorded(event as Envelope<'tool.started'>) : undefined),
    flush: () => 0,
    close: async () => {},
    closeSync: () => {},
  };
}
