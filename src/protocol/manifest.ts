/**
 * The prompt manifest: the system-prompt section that tells the model which tools and skills it
 * has, what their parameters are, and how to write a call (docs/tools.md, The manifest).
 */
import { ConfigError } from '../errors.js';
import { isSkill } from '../tools/skill-mark.js';
import type { Tool } from '../tools/types.js';
import { describeParameterLines } from './describe-schema.js';
import { toolExamples, userExamples, type ManifestExample } from './manifest-examples.js';

export { exampleCall, type ExampleCall } from './example-call.js';
export type { ManifestExample } from './manifest-examples.js';

/** Options of `renderManifest`. */
export type ManifestOptions = {
  /** `xml` (default) adds the `<ACTION>` rules and examples; `native` lists the tools only. */
  protocol?: 'xml' | 'native';
  /** Text placed before the tool list. */
  instructions?: string;
  /**
   * Your own few-shot replies, in place of those built from the tools (XML protocol only). Each is
   * checked as a reply of the agent would be: one that does not parse or validate is a ConfigError.
   */
  examples?: readonly ManifestExample[];
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
 * required marks, enums, defaults, bounds, descriptions), skills (`defineSkill`) listed apart from
 * plain tools; then, for the XML protocol, the format rules and a few example replies, each checked
 * against the tools: a call, a list argument and text in CDATA (when a tool takes one), and an
 * answer without a tool; or the `examples` given.
 *
 * @example
 * const systemPrompt = `You are the referee.\n\n${renderManifest([lookupPlayer])}`;
 */
export function renderManifest(tools: readonly Tool[], options: ManifestOptions = {}): string {
  const protocol = options.protocol ?? 'xml';
  if (options.examples !== undefined && protocol !== 'xml') throw new ConfigError("examples show <ACTION> replies: they need protocol 'xml'");
  const sections: string[] = [];
  if (options.instructions !== undefined && options.instructions.trim() !== '') sections.push(options.instructions.trim());

  const plain = tools.filter((tool) => !isSkill(tool));
  const skills = tools.filter((tool) => isSkill(tool));
  if (plain.length > 0 || skills.length === 0) {
    const intro = protocol === 'xml' ? 'You can call these tools:' : 'You can call these tools through function calling:';
    sections.push(['# Tools', '', intro, ...plain.flatMap((tool) => ['', ...describeTool(tool)])].join('\n'));
  }
  if (skills.length > 0) {
    sections.push(['# Skills', '', SKILLS_INTRO, ...skills.flatMap((tool) => ['', ...describeTool(tool)])].join('\n'));
  }

  if (protocol === 'xml') {
    sections.push(['# How to call tools', '', ...XML_RULES.map((rule) => `- ${rule}`)].join('\n'));
    const examples = options.examples === undefined ? toolExamples(tools) : userExamples(options.examples, tools);
    if (examples.length > 0) sections.push(['# Examples', ...examples.map(({ label, text }) => `\n${label}:\n${text}`)].join('\n'));
  } else {
    sections.push('When you can answer without a tool, reply in plain text without a function call.');
  }
  return sections.join('\n\n');
}

const SKILLS_INTRO = 'Skills do several steps for you in one call. Call them like tools.';

function describeTool(tool: Tool): string[] {
  const lines = [`## ${tool.name}`];
  const description = tool.description.trim();
  if (description !== '') lines.push(description);
  const parameters = describeParameterLines(tool.parameters);
  lines.push(...(parameters.length === 0 ? ['No parameters.'] : ['Parameters:', ...parameters]));
  return lines;
}
