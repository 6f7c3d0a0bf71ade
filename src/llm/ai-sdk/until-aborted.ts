/**
 * Settles with `work`, or rejects with the signal's reason as soon as it aborts: a model that
 * ignores its abort signal must not hold a run (or the silence timer's timeout) hostage.
 * `late` gets what `work` resolves to after the abort, to release it (an unread stream).
 */
export function untilAborted<T>(work: PromiseLike<T>, signal: AbortSignal, late?: (value: T) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason ?? new Error('the request was aborted'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(work).then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) late?.(value);
        else resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
