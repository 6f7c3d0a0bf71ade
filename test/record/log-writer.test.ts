import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBus } from '../../src/bus/bus.js';
import { sequentialIds } from '../../src/bus/ids.js';
import { crc32, crc32Bytes } from '../../src/record/log-line.js';
import { readLog } from '../../src/record/read-log.js';
import { createSessionLog } from '../../src/record/session-log.js';
import { tempDir } from './helpers.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

describe('the log writer', () => {
  it('takes the same CRC-32 over UTF-8 bytes as over their text, at any length and seed', () => {
    const alphabet = ['a', '{', '"', 'é', '中', '😀', '\n', '\\'];
    for (let length = 0; length < 40; length++) {
      const text = Array.from({ length }, (_, index) => alphabet[(index * 7 + length) % alphabet.length]).join('');
      const bytes = Buffer.from(`xx${text}yy`, 'utf8');
      for (const seed of [0, 1, 0xdeadbeef]) expect(crc32Bytes(bytes, 2, bytes.length - 2, seed)).toBe(crc32(text, seed));
    }
  });

  it('writes lines of any script, bursts past its buffer and lines longer than it, each checksum chained', async () => {
    let dir: string;
    ({ dir, cleanup } = tempDir());
    const path = join(dir, 'unicode.jsonl');
    const log = createSessionLog(path);
    const bus = createBus({ ids: sequentialIds('e') });
    log.attach(bus);
    const texts = ['café', '中文字', 'emoji 😀 and "quotes" \\ back', 'x'.repeat(200_000), ...Array.from({ length: 2_000 }, (_, index) => `line ${index} ü`)];
    for (const text of texts) bus.publish('agent.said', { text });
    const size = log.flush();
    await log.close();
    expect(statSync(path).size).toBe(size);
    const { events, tampered, quarantined } = readLog(path);
    expect(tampered).toEqual([]);
    expect(quarantined).toEqual([]);
    expect(events.slice(1).map((event) => (event.data as { text: string }).text)).toEqual(texts);
  });
});
