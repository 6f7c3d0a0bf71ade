/**
 * The prompt manifest: the system-prompt section that tells the model which tools it has, what
 * their parameters are, and how to write a call (docs/tools.md, The manifest).
 */
import { describeParameterLines } from './describe-schema.js';
import { exampleCall, type ExampleCall } from './example-call.js';
import { renderAction } from './render-call.js';
import type { Tool } from '../tools/types.js';

export { exampleCall, type ExampleCall } from './example-call.js';

/** Options of `renderManifest`. */
export type ManifestOptions = {
  /** `xml` (default) adds the `<ACTION>` rules and an example; `native` lists the tools only. */
  protocol?: 'xml' | 'native';
  /** Text placed before the tool list. */
  instructions?: string;
};

/** The `<ACTION>` format rules in plain words (docs/protocol.md, as a model needs them). */
export const XML_RULES: readonly string[] = Object.freeze([
  'Text before the <ACTION> block is what you say; others see it.',
  'Write at most one <ACTION> block per reply, at the end. Nothing after </ACTION> is read.',
  'Inside <ACTION>, write one element per call: the tag is the tool name. Several calls run in the order written.',
  'Inside a call, write one element per argument: the tag is the argument name. Leave out optional arguments you do not need.',
  'For a list, repeat the argument tag once per item, or put one <item> element per item inside it.',
  'For an object, write one child element per field, or a JSON object.',
  'Write numbers and booleans as plain text: 42, -3.5, true.',
  'Wrap code, diffs and any text containing <, > or & in <![CDATA[ … ]]>.',
  'Do not use attributes. Do not write <OBSERVATION>: tool results come back to you in the next message.',
  'When you can answer without a tool, reply without an <ACTION> block.',
]);

/**
 * Renders the manifest for an agent's tools: each tool's name, description and parameters (types,
 * required marks, enums, defaults, bounds, descriptions), then, for the XML protocol, the format
 * rules and one example call built from a real tool and checked against its schema.
 *
 * @example
 * const systemPrompt = `You are the referee.\n\n${renderManifest([lookupPlayer])}`;
 */
export function renderManifest(tools: readonly Tool[], options: ManifestOptions = {}): string {
  const protocol = options.protocol ?? 'xml';
  const sections: string[] = [];
  if (options.instructions !== undefined && options.instructions.trim() !== '') sections.push(options.instructions.trim());

  const intro = protocol === 'xml' ? 'You can call these tools:' : 'You can call these tools through function calling:';
  sections.push(['# Tools', '', intro, ...tools.flatMap((tool) => ['', ...describeTool(tool)])].join('\n'));

  if (protocol === 'xml') {
    const rules = ['# How to call tools', '', ...XML_RULES.map((rule) => `- ${rule}`)];
    const example = pickExample(tools);
    rules.push('', 'Example:', '', example === undefined ? genericExample() : `I will check that.\n${renderAction([example])}`);
    sections.push(rules.join('\n'));
  } else {
    sections.push('When you can answer without a tool, reply in plain text without a function call.');
  }
  return sections.join('\n\n');
}

function describeTool(tool: Tool): string[] {
  const lines = [`## ${tool.name}`];
  const description = tool.description.trim();
  if (description !== '') lines.push(description);
  const parameters = describeParameterLines(tool.parameters);
  lines.push(...(parameters.length === 0 ? ['No parameters.'] : ['Parameters:', ...parameters]));
  return lines;
}

/** The first tool whose example call has arguments and validates; else the first valid one at all. */
function pickExample(tools: readonly Tool[]): ExampleCall | undefined {
  let fallback: ExampleCall | undefined;
  for (const tool of tools) {
    const call = exampleCall(tool);
    if (call === undefined) continue;
    if (Object.keys(call.args).length > 0) return call;
    fallback ??= call;
  }
  return fallback;
}

function genericExample(): string {
  return ['I will check that.', '<ACTION>', '<tool_name>', '<argument_name>value</argument_name>', '</tool_name>', '</ACTION>'].join('\n');
}
