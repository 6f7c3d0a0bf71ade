import { describe, expect, it } from 'vitest';
import { formatWait } from '../../src/agent/retry-wait.js';

describe('formatWait', () => {
  it.each<[number, string]>([
    [750, '750 ms'],
    [30_000, '30 s'],
    [90_000, '90 s'],
    [120_000, '2 min'],
    [3_600_000, '1 h'],
    // A wait counted down from a clock is a millisecond short: it still reads as the hour it is.
    [3_599_999, '1 h'],
    [7_200_000, '2 h'],
    [172_800_000, '2 d'],
    [Number.POSITIVE_INFINITY, 'an unbounded time'],
  ])('%d ms → %s', (ms, text) => expect(formatWait(ms)).toBe(text));
});
