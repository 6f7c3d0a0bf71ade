import { errorMessage } from '../errors.js';
import { ProviderError } from '../llm/provider-error.js';
import type { ModelRequest, ModelResponse, Provider, StreamEvent } from '../llm/types.js';
import type { ParseOptions } from '../protocol/parse-options.js';
import { createActionScanner, type ActionScanner } from '../protocol/scan-output.js';
import type { ParsedOutput } from '../protocol/types.js';
import { retryAfterFailure, type ModelRetryPolicy, type Publish, type Randomness } from './call-model.js';

/**
 * Why a generation is stopped once `</ACTION>` closes. One instance: an error's stack is captured
 * when it is made, which would cost more than the rest of the stop, on the path to running the tools.
 */
const STOPPED_AFTER_BLOCK = new Error('stopped after </ACTION>');

/** A streamed model turn: the response, and (XML) the output the streaming scanner already parsed. */
export type StreamedReply = { response: ModelResponse; parsed?: ParsedOutput };

/**
 * One deliberation over a streaming provider. Visible text goes on the bus as `llm.delta` while the
 * model writes (for XML, only the text outside the `<ACTION>` block, through the same linear
 * scanner that parses the block, so nothing is parsed twice); reasoning and native call pieces go
 * out as `llm.reasoning` and `llm.tool_call.delta`. Once `</ACTION>` closes, the generation is
 * stopped: nothing the model writes after the block could run. A stream that fails part-way is
 * retried from scratch after an `llm.superseded` voids what it showed; a partial block never runs.
 *
 * @param xml parse options for the XML protocol; absent for native calls.
 */
export function streamModel(
  provider: Provider,
  request: ModelRequest,
  policy: Required<ModelRetryPolicy>,
  publish: Publish,
  xml: ParseOptions | undefined,
  randomness: Randomness,
): Promise<StreamedReply> {
  const attempt = (number: number): Promise<StreamedReply> => streamAttempt(provider, request, number, publish, xml);
  return attempt(1).catch((thrown: unknown) => retryAfterFailure(request, policy, publish, thrown, 1, attempt, randomness));
}

async function streamAttempt(
  provider: Provider,
  request: ModelRequest,
  attempt: number,
  publish: Publish,
  xml: ParseOptions | undefined,
): Promise<StreamedReply> {
  // Its own signal, so that stopping this generation early does not abort the run.
  const generation = new AbortController();
  const stop = (): void => generation.abort(request.signal.reason);
  if (request.signal.aborted) stop();
  else request.signal.addEventListener('abort', stop, { once: true });
  const scanner = xml === undefined ? undefined : createActionScanner(xml);
  const parts: string[] = [];
  const round = request.round;
  let shown = false;
  let closed = false;
  let response: ModelResponse | undefined;
  try {
    for await (const event of provider.stream!({ ...request, signal: generation.signal }) as AsyncIterable<StreamEvent>) {
      if (event.type === 'text') {
        parts.push(event.text);
        if (scanner === undefined) {
          shown = true;
          publish('llm.delta', { round, text: event.text, attempt });
          continue;
        }
        const progress = scanner.push(event.text);
        if (progress.visible !== '') {
          shown = true;
          publish('llm.delta', { round, text: progress.visible, attempt });
        }
        if (progress.closed) {
          closed = true;
          break;
        }
      } else if (event.type === 'reasoning') {
        shown = true;
        publish('llm.reasoning', { round, text: event.text, attempt });
      } else if (event.type === 'tool_call_delta') {
        shown = true;
        const data: { round: number; attempt: number; index: number; id?: string; name?: string; argumentsDelta: string } = {
          round,
          attempt,
          index: event.index,
          argumentsDelta: event.argumentsDelta,
        };
        if (event.id !== undefined) data.id = event.id;
        if (event.name !== undefined) data.name = event.name;
        publish('llm.tool_call.delta', data);
      } else if (event.type === 'finish') {
        response = event.response;
      }
    }
    if (closed) {
      // `</ACTION>` closed: the generation was stopped (the loop's `break` closed the stream).
      generation.abort(STOPPED_AFTER_BLOCK);
      response = { text: parts.join(''), finishReason: 'stop' };
    } else if (response === undefined) {
      throw new ProviderError('network', `${provider.name}: the stream ended without finishing (cut short)`);
    }
  } catch (thrown) {
    if (shown) publish('llm.superseded', { round, attempt, reason: errorMessage(thrown) });
    throw thrown;
  } finally {
    request.signal.removeEventListener('abort', stop);
  }
  if (scanner === undefined) return { response };
  // A provider whose finish carries text it never streamed: scan that text now.
  if (parts.length === 0 && response.text !== '') scanner.push(response.text);
  else if (parts.join('') !== response.text) return { response };
  return { response, parsed: finishScan(scanner, response, publish, round, attempt) };
}

/** Ends the scan with how the model stopped, and shows the visible text the scanner held back. */
function finishScan(scanner: ActionScanner, response: ModelResponse, publish: Publish, round: number, attempt: number): ParsedOutput {
  const finish = scanner.finish({
    finishReason: response.finishReason,
    ...(response.stopSequence !== undefined && { stopSequence: response.stopSequence }),
  });
  if (finish.visible !== '') publish('llm.delta', { round, text: finish.visible, attempt });
  return finish.parsed;
}


