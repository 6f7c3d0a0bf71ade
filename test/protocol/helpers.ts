import { afterAll, beforeAll, expect } from 'vitest';
import type { ProtocolCategory } from '../../src/protocol/types.js';

/** Every protocol category the parse stage can report (docs/protocol.md, categories and events). */
export const PROTOCOL_CATEGORIES: ReadonlySet<ProtocolCategory> = new Set<ProtocolCategory>([
  'unclosed_action',
  'multiple_action_blocks',
  'action_in_code_fence',
  'empty_action',
  'malformed_xml',
  'malformed_call',
  'attributes_not_supported',
  'doctype_forbidden',
  'invalid_character',
  'limit_exceeded',
  'duplicate_call_id',
  'unknown_tool',
  'not_permitted',
  'validation_error',
  'duplicate_param',
  'invalid_arguments_json',
  'forbidden_name',
]);

/** Registers a check that the suite leaves `Object.prototype` exactly as it found it. */
export function guardPrototype(): void {
  let before: string[] = [];
  beforeAll(() => {
    before = Reflect.ownKeys(Object.prototype).map(String).sort();
  });
  afterAll(() => {
    expect(Reflect.ownKeys(Object.prototype).map(String).sort()).toEqual(before);
    const probe: Record<string, unknown> = {};
    for (const name of ['polluted', 'isAdmin', 'a', 'x', 'path']) expect(probe[name]).toBeUndefined();
  });
}
