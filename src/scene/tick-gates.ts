/**
 * The host's tick gates (`run({ beforeTick })`) a scene is waiting on, so that stopping the scene
 * lets its run go on (and end) whether or not the gate ever opens.
 */
export class TickGates {
  private readonly waiters = new Set<() => void>();

  /**
   * Resolves when `gate` opens or `openAll` is called, whichever comes first. Not a race against
   * the scene's end: a run of a million ticks would leave a million reactions on it.
   */
  wait(gate: Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const letGo = (): void => {
        this.waiters.delete(letGo);
        resolve();
      };
      this.waiters.add(letGo);
      gate.then(letGo, (error: unknown) => {
        this.waiters.delete(letGo);
        reject(error);
      });
    });
  }

  /** Lets every waiting run go on: the scene has stopped. */
  openAll(): void {
    for (const letGo of [...this.waiters]) letGo();
  }
}
