// Requests over a process's IPC channel that wait for an answer carrying their id, each for at
// most a time limit: a process that exits or never answers leaves no request waiting.

export class PendingAnswers<T> {
  private nextId = 1;
  private readonly waiting = new Map<number, (answer: T | undefined) => void>();

  /**
   * Sends a request with a fresh id (`send` calls `failed` if it could not be sent); resolves
   * with the answer given to `answer(id, …)`, or undefined when none came within `timeoutMs`.
   */
  ask(send: (id: number, failed: () => void) => void, timeoutMs: number): Promise<T | undefined> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(undefined), timeoutMs);
      const settle = (answer: T | undefined) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(answer);
      };
      this.waiting.set(id, settle);
      send(id, () => settle(undefined));
    });
  }

  /** The answer to request `id`; one nobody waits for any more is dropped. */
  answer(id: number, value: T): void {
    this.waiting.get(id)?.(value);
  }
}
