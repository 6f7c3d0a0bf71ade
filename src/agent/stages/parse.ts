import type { ModelResponse } from '../../llm/types.js';
import { parseNativeCalls } from '../../protocol/parse-native.js';
import { parseOutput, type ParseOptions } from '../../protocol/parse-output.js';
import type { MalformedProblem, ParsedOutput } from '../../protocol/types.js';
import type { AgentConfig } from '../agent-config.js';
import { checkAnswer } from '../output-schema.js';
import type { RunState } from '../run/run-state.js';
import type { StagePort } from './stage-port.js';

/** Turns the model's output into visible text and raw calls (or a malformed-block problem). */
export function parse(run: RunState, config: AgentConfig, port: StagePort): void {
  const response = run.response!;
  const { protocol, limits, logger } = config;
  let parsed: ParsedOutput;
  if (protocol === 'xml') {
    if (response.toolCalls?.length) {
      logger.warn({ agent: config.name, calls: response.toolCalls.length }, 'native tool calls ignored: protocol is xml');
    }
    // A streamed reply was parsed as it arrived, by the scanner that found the visible text.
    parsed = run.streamed ?? parseOutput(response.text, parseOptionsFor(run, config, response));
    run.streamed = undefined;
  } else {
    if (/<ACTION[\s>]/i.test(response.text)) {
      logger.warn({ agent: config.name }, 'an <ACTION> block in the text is ignored: protocol is native');
    }
    parsed = parseNativeCalls(response, { limits, callId: callIdsFor(run, config) });
  }
  run.parsed = parsed;
  run.messages.push(
    response.toolCalls?.length && protocol === 'native'
      ? { role: 'assistant', content: response.text, toolCalls: response.toolCalls }
      : { role: 'assistant', content: rawAssistantText(response.text, response.stopSequence) },
  );
  if (parsed.text !== '') {
    run.text = parsed.text;
    port.publish('agent.said', { text: parsed.text });
  }
  if (parsed.trailing !== undefined) port.publish('action.trailing', { text: parsed.trailing });
  if (response.passed === true) return;
  // The nudge's answer is taken if it fits; there is no round left to correct it in.
  if (run.nudging) {
    if (config.output !== undefined && parsed.problem === undefined && parsed.text !== '') checkOutput(run, config, parsed.text, false);
    return;
  }
  if (parsed.problem !== undefined) {
    reportMalformed(run, port, parsed.problem);
  } else if (parsed.calls.length === 0) {
    const choice = config.toolChoice;
    // Asked for a call and given none before one ran: a correction, like a reply that says nothing.
    // Once the call has run the model may answer, or a run could never end.
    if (choice === 'required' && run.history.length === 0) run.outcome = { kind: 'uncalled' };
    else if (typeof choice === 'object' && !run.history.some((record) => record.name === choice.tool)) run.outcome = { kind: 'uncalled', tool: choice.tool };
    else if (parsed.text === '') run.outcome = { kind: 'empty' };
    else if (config.output !== undefined) checkOutput(run, config, parsed.text, true);
  }
}

/** Reads the final answer with the `output` schema: its value, or (when it can be) a correction. */
function checkOutput(run: RunState, config: AgentConfig, text: string, correct: boolean): void {
  const checked = checkAnswer(text, config.output!.compiled, config.limits.maxIssues);
  if (checked.ok) {
    run.output = checked.value;
    // Answered: the problems of earlier answers no longer describe the run.
    run.lastIssues = undefined;
  } else if (correct) run.outcome = { kind: 'invalid_output', issues: checked.issues };
}

/** Publishes `action.malformed` and makes the round one the model must correct. */
export function reportMalformed(run: RunState, port: StagePort, problem: MalformedProblem): void {
  const { category, message, offset } = problem;
  run.cause = port.publish('action.malformed', {
    code: category,
    category,
    message,
    ...(offset !== undefined && { offset }),
  }).id;
  run.outcome = { kind: 'malformed', problem };
}

/** The call ids of this round: `<agent>/<run>.<round>.<n>`, stable for the log and for resume. */
function callIdsFor(run: RunState, config: AgentConfig): (index: number) => string {
  return (index) => `${config.name}/${run.number}.${run.round}.${index + 1}`;
}

/** How the XML of this round is parsed; `response` adds how the model stopped. */
export function parseOptionsFor(run: RunState, config: AgentConfig, response: ModelResponse | undefined): ParseOptions {
  const options: ParseOptions = { limits: config.limits, callId: callIdsFor(run, config) };
  if (response !== undefined) {
    options.finishReason = response.finishReason;
    if (response.stopSequence !== undefined) options.stopSequence = response.stopSequence;
  }
  return options;
}

/** The assistant's reply as it goes back into the history: the closer restored if a stop stripped it. */
function rawAssistantText(text: string, stopSequence: string | undefined): string {
  return stopSequence !== undefined && /^\s*<\/action\s*>\s*$/i.test(stopSequence) ? `${text}</ACTION>` : text;
}
