import type { CallRecord } from '../../bus/event-data.js';
import type { ChatMessage, MessageImage } from '../../llm/types.js';
import type { AgentConfig } from '../agent-config.js';
import {
  IMAGES_FOLLOW,
  callImages,
  describeCall,
  observationText,
  repairNote,
  wrapObservation,
  type ObservationOptions,
  type ObservedCall,
  type RoundReport,
} from '../observation-text.js';
import { ranEntry } from '../run/run-record.js';
import { isUnreadReply, pushTo, type RunState } from '../run/run-state.js';
import type { StagePort } from './stage-port.js';

/** Writes the round's observation into the history and on the bus. */
export function observe(run: RunState, config: AgentConfig, port: StagePort): void {
  const outcome = run.outcome;
  const options: ObservationOptions = { maxOutputChars: config.maxObservationChars, protocol: config.protocol };
  let report: RoundReport;
  let observed: ObservedCall[] = [];
  if (outcome.kind === 'calls') {
    observed = recordCalls(run);
    report = outcome.repaired === undefined ? { kind: 'calls', calls: observed } : { kind: 'calls', calls: observed, repaired: outcome.repaired };
    run.corrections = 0;
    // Corrected: the earlier problems no longer describe how the run is going.
    run.lastIssues = undefined;
  } else if (isUnreadReply(outcome) || outcome.kind === 'rejected') {
    report = outcome;
    run.corrections++;
    if (outcome.kind === 'rejected' && outcome.recorded !== true) {
      const { callId, name } = outcome.rejection;
      run.calls = pushTo(run.calls, { callId, name, round: run.round, outcome: 'rejected', durationMs: 0, attempts: 0, rejection: outcome.rejection });
      outcome.recorded = true;
    }
    if (outcome.kind === 'malformed') run.lastIssues = [{ category: outcome.problem.category, message: outcome.problem.message }];
    else if (outcome.kind === 'invalid_output') run.lastIssues = outcome.issues;
  } else {
    return;
  }
  const toolCalls = config.protocol === 'native' ? run.response?.toolCalls : undefined;
  const images = imageRoute(config, toolCalls !== undefined && toolCalls.length > 0);
  if (images !== 'none') options.images = 'attached';
  const { text: plain, ok } = observationText(report, options);
  // Compact history stores each result in a variable and names it under the observation.
  const text = config.memory?.observed(run, observed, plain) ?? plain;
  run.observation = { text, ok, calls: observed };
  run.cause = port.publish('agent.observation', { text, ok, round: run.round }).id;
  if (toolCalls?.length) {
    const shown: MessageImage[] = [];
    // Every native call needs its own tool message, whatever became of it.
    for (const call of toolCalls) {
      const entry = observed.find((item) => item.callId === call.id);
      const repaired = outcome.kind === 'calls' && outcome.repaired?.callId === call.id ? `${repairNote(outcome.repaired)}\n` : '';
      const content = entry !== undefined ? repaired + describeCall(entry, options) : text;
      const message: ChatMessage = { role: 'tool', callId: call.id, name: call.name, content: config.memory?.toolMessage(call.id, content) ?? content };
      // Providers that mark a failed result (Anthropic's is_error, Gemini's error response) are told.
      if (entry === undefined || entry.status !== 'completed') message.failed = true;
      const attached = entry !== undefined && images !== 'none' ? callImages(entry) : [];
      if (attached.length > 0 && images === 'tool') message.images = attached;
      else shown.push(...attached);
      run.messages.push(message);
    }
    // A provider whose tool results are text only sees the images right after them.
    if (shown.length > 0) run.messages.push({ role: 'user', content: IMAGES_FOLLOW, images: shown });
  } else {
    const attached = images === 'none' ? [] : observed.flatMap(callImages);
    run.messages.push(attached.length > 0 ? { role: 'user', content: wrapObservation(text), images: attached } : { role: 'user', content: wrapObservation(text) });
  }
}

/** Where this round's images go: in the tool messages, in a user message, or nowhere (placeholders). */
function imageRoute(config: AgentConfig, native: boolean): 'tool' | 'user' | 'none' {
  const accepts = config.provider.accepts;
  if (native && accepts?.imagesInToolResults === true) return 'tool';
  return accepts?.imagesInUserMessages === true ? 'user' : 'none';
}

/** Adds the round's calls to the run's history (once) and returns them as the model will hear of them. */
export function recordCalls(run: RunState): ObservedCall[] {
  const outcome = run.outcome;
  if (outcome.kind !== 'calls') return [];
  let observed: ObservedCall[] = [];
  for (let index = 0; index < outcome.calls.length; index++) {
    const entry = outcome.calls[index]!;
    const { callId, name } = entry.call;
    const { approval, result, resultApproval } = entry;
    if (approval?.status === 'decided' && !approval.approved) {
      observed = pushTo(observed, { status: 'denied', callId, name, reason: approval.reason });
      if (outcome.recorded !== true) {
        run.history = pushTo(run.history, { callId, name, round: run.round, outcome: 'denied', durationMs: 0, attempts: 0 });
        run.calls = pushTo(run.calls, { callId, name, round: run.round, outcome: 'denied', durationMs: 0, attempts: 0, args: entry.call.args, reason: approval.reason });
      }
      continue;
    }
    if (result === undefined) continue;
    if (outcome.recorded !== true) run.dispatched++;
    if (resultApproval?.status === 'decided' && !resultApproval.approved) {
      // The call ran; the model hears only that its result was withheld, and why.
      observed = pushTo(observed, { status: 'result_rejected', callId, name, reason: resultApproval.reason });
      if (outcome.recorded !== true) {
        const record: CallRecord = { callId, name, round: run.round, outcome: 'result_rejected', durationMs: result.durationMs, attempts: result.attempts };
        run.history = pushTo(run.history, record);
        run.calls = pushTo(run.calls, ranEntry(record, result, resultApproval.reason));
      }
      continue;
    }
    observed = pushTo(observed, result);
    if (outcome.recorded !== true) {
      const ended = result.status === 'completed' ? 'completed' : result.error.kind === 'aborted' ? 'aborted' : 'failed';
      const record: CallRecord = { callId, name, round: run.round, outcome: ended, durationMs: result.durationMs, attempts: result.attempts };
      run.history = pushTo(run.history, record);
      run.calls = pushTo(run.calls, ranEntry(record, result));
    }
  }
  outcome.recorded = true;
  return observed;
}
