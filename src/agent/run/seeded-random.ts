import { xoroshiro128plus, xoroshiro128plusFromState } from 'pure-rand/generator/xoroshiro128plus';

/**
 * An agent's random numbers: a seeded xoroshiro128+ whose state is plain data, so a snapshot
 * carries it and a resumed agent draws what the first one would have.
 */
export class SeededRandom {
  private readonly generator: ReturnType<typeof xoroshiro128plus>;

  /** A generator from a seed (a random one when `seed` is undefined), or from a saved state. */
  constructor(seed: number | undefined, state?: readonly number[]) {
    if (state !== undefined) {
      this.generator = xoroshiro128plusFromState(state);
      return;
    }
    this.generator = xoroshiro128plus(seed ?? Math.floor(Math.random() * 0x1_0000_0000) | 0);
    // The first output tracks the seed; start one step in.
    this.generator.next();
  }

  /** Uniform in [0, 1). */
  next(): number {
    return (this.generator.next() >>> 0) / 0x1_0000_0000;
  }

  /** The generator's state, for a snapshot. */
  state(): number[] {
    return [...this.generator.getState()];
  }
}
