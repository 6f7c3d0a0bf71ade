import { createHash } from 'node:crypto';
import { defineTool, type Tool } from '../../src/index.js';

/** A real 1×1 PNG. */
export const PNG = new Uint8Array(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'));
export const PNG_BASE64 = Buffer.from(PNG).toString('base64');
export const PNG_SHA256 = createHash('sha256').update(PNG).digest('hex');

/** Bytes that start like a JPEG, `size` long. */
export function jpegBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set([0xff, 0xd8, 0xff, 0xe0]);
  for (let index = 4; index < size; index++) bytes[index] = index % 251;
  return bytes;
}

/** A tool that returns whatever `make` gives it. */
export function resultTool(name: string, make: () => unknown): Tool {
  return defineTool({
    name,
    description: `Returns a result (${name}).`,
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    readOnly: true,
    execute: () => make(),
  });
}

export const CALL_XML = (name: string): string => `<ACTION><${name}></${name}></ACTION>`;
