/**
 * The system-prompt section of an agent with structured output and the XML protocol: how to write
 * the final answer (docs/structured-output.md). Native agents send the schema on the wire instead.
 */
import type { JsonSchema } from '../tools/types.js';

/**
 * `# Final answer`: the answer is only a JSON value matching the schema, shown in full.
 *
 * @example
 * renderOutputSection({ type: 'object', properties: { winner: { type: 'string' } }, required: ['winner'] });
 */
export function renderOutputSection(schema: JsonSchema, options: { tools: boolean }): string {
  return [
    '# Final answer',
    '',
    `When you are done${options.tools ? ' (with no <ACTION> block)' : ''}, reply with only a JSON value that matches this JSON Schema: no other text before or after it.`,
    '',
    JSON.stringify(schema, null, 2),
  ].join('\n');
}
