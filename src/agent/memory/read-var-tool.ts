import { defineTool } from '../../tools/define-tool.js';
import { ToolError } from '../../tools/tool-error.js';
import type { Tool } from '../../tools/types.js';
import type { VariableStore } from './variables.js';

/** The name of the built-in tool that reads result variables. */
export const READ_VAR = 'read_var';

/**
 * The built-in `read_var` tool of one compact-history agent: a page of one of its result variables.
 * It goes through the same registry, validation and dispatch as any tool; an unknown, evicted or
 * out-of-range read fails as a `not_found` or `execution` ToolError the model sees as an
 * observation. A page is at most `pageChars` long, so it fits one observation uncut.
 */
export function readVarTool(store: VariableStore, pageChars: number): Tool {
  return defineTool({
    name: READ_VAR,
    description:
      'Read a stored tool result by its reference ($r1, $r2, …), as listed in your earlier turns. ' +
      `Returns up to \`length\` characters (at most ${pageChars}) from \`offset\`, and the total length, so a large result can be read page by page.`,
    parameters: {
      type: 'object',
      properties: {
        ref: { type: 'string', description: 'The reference, e.g. $r3.', maxLength: 40 },
        offset: { type: 'integer', minimum: 0, description: 'First character to read (default 0).' },
        length: { type: 'integer', minimum: 1, description: `Characters to read (default and maximum ${pageChars}).` },
      },
      required: ['ref'],
      additionalProperties: false,
    },
    readOnly: true,
    execute: ({ ref, offset, length }) => {
      const from = (offset as number | undefined) ?? 0;
      const read = store.read(ref as string, from, Math.min((length as number | undefined) ?? pageChars, pageChars));
      if (!read.ok) {
        throw new ToolError(read.message, {
          kind: read.code === 'out_of_range' ? 'execution' : 'not_found',
          ...(read.code === 'out_of_range' && { hint: 'read from an offset below the total length' }),
        });
      }
      const end = read.offset + read.text.length;
      const rest = end < read.total ? `; read on from offset ${end}` : '; the end';
      return (
        `${read.ref} (${read.tool}), characters ${read.offset}–${end} of ${read.total}${rest}` +
        `${read.cut ? ' (the stored value was cut at the variable limit)' : ''}:\n${read.text}`
      );
    },
  });
}
