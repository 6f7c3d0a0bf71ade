import { expectTypeOf, test } from 'vitest';
import { toolResult, type Envelope, type ResultPart, type ToolResult } from '../../src/index.js';
import { type ResultPartInfo } from '../../src/bus/index.js';

test('toolResult takes only known parts and image formats', () => {
  const png = new Uint8Array(8);
  expectTypeOf(toolResult.image(png, 'image/png')).toEqualTypeOf<ToolResult>();
  expectTypeOf(toolResult([{ type: 'text', text: 'a' }, { type: 'json', value: { b: 1 } }])).toEqualTypeOf<ToolResult>();
  // @ts-expect-error: not a format every provider takes
  toolResult.image(png, 'image/bmp');
  // @ts-expect-error: bytes, not base64 text
  toolResult([{ type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' }]);
  // @ts-expect-error: not a kind of part
  toolResult([{ type: 'audio', data: png }]);
  expectTypeOf<Extract<ResultPart, { type: 'image' }>['data']>().toEqualTypeOf<Uint8Array>();
});

test('tool.completed describes a rich result without bytes', () => {
  expectTypeOf<Envelope<'tool.completed'>['data']['parts']>().toEqualTypeOf<ResultPartInfo[] | undefined>();
  expectTypeOf<Extract<ResultPartInfo, { type: 'image' }>>().not.toHaveProperty('data');
});
