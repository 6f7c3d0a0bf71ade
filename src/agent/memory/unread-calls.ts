import type { CallRecord } from '../../bus/event-data.js';
import type { ChatMessage } from '../../llm/types.js';
import { wrapObservation } from '../observation-text.js';
import type { RunState } from '../run/run-state.js';

/**
 * Ends the messages a run leaves for memory, and returns the calls of its last round that ran but
 * whose results the model never read (the run was aborted while a result waited for approval, or
 * while the round was observed). The memory must still say that they ran, or the next run could
 * repeat a call with side effects. Denied calls never ran: they are not among the calls made.
 */
export function closeUnread(run: RunState, raw: ChatMessage[]): CallRecord[] {
  const unread = run.observation === undefined ? run.history.filter((record) => record.round === run.round && record.outcome !== 'denied') : [];
  const last = raw.at(-1);
  if (last?.role === 'assistant' && last.toolCalls?.length) {
    if (unread.length === 0) {
      // Native calls cut off before any ran have no tool results; providers refuse such a history.
      raw.pop();
    } else {
      // Every native call needs its tool message: each says what became of it.
      for (const call of last.toolCalls) {
        const record = unread.find((entry) => entry.callId === call.id);
        raw.push({ role: 'tool', callId: call.id, name: call.name, content: record === undefined ? 'Not run: the run was aborted.' : unreadNote([record]) });
      }
    }
  } else if (unread.length > 0 && last?.role === 'assistant') {
    raw.push({ role: 'user', content: wrapObservation(unreadNote(unread)) });
  }
  return unread;
}

/** What memory keeps of calls that ran in a round whose results the model never read. */
export function unreadNote(records: readonly CallRecord[]): string {
  const calls = records.map((record) => `${record.name} (${record.callId}): ${record.outcome}`).join('; ');
  return `The run was aborted before these results were read. These calls were made (check before repeating one): ${calls}.`;
}

/** A message without its image bytes (memory keeps their placeholder lines, not the pictures). */
export function withoutImages(message: ChatMessage): ChatMessage {
  if (!('images' in message) || message.images === undefined) return message;
  const { images: _images, ...rest } = message;
  return rest as ChatMessage;
}
