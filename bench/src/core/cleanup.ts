/**
 * What must be undone however a scenario ends (finished, failed, Ctrl-C, watchdog): stop the
 * services it started, drop their database, delete their topics, close the receiver. Each task
 * runs once, newest first, each bounded in time.
 */
export class Cleanup {
  private readonly tasks: { name: string; run: () => Promise<void> }[] = [];

  add(name: string, run: () => Promise<void>): () => void {
    const task = { name, run };
    this.tasks.push(task);
    return () => {
      const index = this.tasks.indexOf(task);
      if (index >= 0) this.tasks.splice(index, 1);
    };
  }

  async runAll(timeoutMs = 30_000, log: (line: string) => void = () => undefined): Promise<void> {
    while (this.tasks.length > 0) {
      const task = this.tasks.pop()!;
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          task.run(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error('timed out')), timeoutMs);
          }),
        ]);
      } catch (error) {
        log(`cleanup "${task.name}" failed: ${(error as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
    }
  }
}
