import { ConfigError } from '../errors.js';
import type { Clock } from '../bus/ids.js';

/** One API key as the ring hands it out: `label` is safe to log (`key 2 of 3`), `value` is not. */
export type LeasedKey = { readonly index: number; readonly label: string; readonly value: string };

/**
 * Several API keys for one provider (`apiKeys`), used in turn. A key answered with
 * 429 rests until its `retry-after` has passed; a key answered with 401/403 is set aside for the
 * life of the ring. Keys never leave the ring except to authenticate: errors and logs name them by
 * their label only.
 */
export class KeyRing {
  private readonly keys: readonly string[];
  private readonly restingUntil: number[];
  private readonly revoked: boolean[];
  private next = 0;

  constructor(
    keys: readonly string[],
    private readonly clock: Clock = Date.now,
  ) {
    const usable = keys.filter((key) => typeof key === 'string' && key.trim() !== '');
    if (usable.length === 0) throw new ConfigError('no API key given: pass apiKey or apiKeys, or set the provider\'s key variable');
    this.keys = usable.map((key) => key.trim());
    this.restingUntil = this.keys.map(() => 0);
    this.revoked = this.keys.map(() => false);
  }

  get size(): number {
    return this.keys.length;
  }

  /**
   * The key to use now: the next one in turn that is neither revoked nor resting. When every
   * usable key rests, the one that wakes first (the caller's retry waits for it). Undefined once
   * every key has been refused.
   */
  lease(): LeasedKey | undefined {
    const now = this.clock();
    let soonest: number | undefined;
    for (let step = 0; step < this.keys.length; step++) {
      const index = (this.next + step) % this.keys.length;
      if (this.revoked[index]) continue;
      if (this.restingUntil[index]! <= now) {
        this.next = (index + 1) % this.keys.length;
        return this.leased(index);
      }
      if (soonest === undefined || this.restingUntil[index]! < this.restingUntil[soonest]!) soonest = index;
    }
    return soonest === undefined ? undefined : this.leased(soonest);
  }

  /** The key was rate-limited: rest it for `retryAfterMs` (or a second when the provider did not say). */
  rest(key: LeasedKey, retryAfterMs: number | undefined): void {
    this.restingUntil[key.index] = this.clock() + Math.max(retryAfterMs ?? 1000, 0);
  }

  /** The key was refused (401/403): never use it again. */
  revoke(key: LeasedKey): void {
    this.revoked[key.index] = true;
  }

  /** How long until some key can be used: 0 when one is ready now, undefined when none is left. */
  waitMs(): number | undefined {
    const now = this.clock();
    let wait: number | undefined;
    for (let index = 0; index < this.keys.length; index++) {
      if (this.revoked[index]) continue;
      const left = Math.max(this.restingUntil[index]! - now, 0);
      wait = wait === undefined ? left : Math.min(wait, left);
    }
    return wait;
  }

  /**
   * Replaces every key in `text` with its label, and masked key echoes (`sk-abc…***…wxyz`, which
   * providers put in 401 messages) with `[redacted]`.
   */
  redact(text: string): string {
    let out = text;
    this.keys.forEach((key, index) => {
      if (key.length >= 4) out = out.split(key).join(`[key ${index + 1}]`);
    });
    return redactKeyLike(out);
  }

  private leased(index: number): LeasedKey {
    return { index, label: `key ${index + 1} of ${this.keys.length}`, value: this.keys[index]! };
  }
}

/** Provider key prefixes, and any word with a run of mask characters, as echoed in error messages. */
const KEY_LIKE = /\b(?:sk-|sk-ant-|AIza)[A-Za-z0-9_\-*.]{4,}|\S*\*{4,}\S*/g;

/** Masks anything that looks like an API key or a masked echo of one. */
export function redactKeyLike(text: string): string {
  return text.replace(KEY_LIKE, '[redacted]');
}
