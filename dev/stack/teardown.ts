// What `npm start` has started, in order, so that whatever way it ends (the
// run's end, Ctrl-C, SIGTERM, a failure half-way through start-up) it stops
// each of them, last started first, and no process outlives it.

export class Teardown {
  private readonly steps: { name: string; stop: () => Promise<unknown> | unknown }[] = [];
  private running: Promise<void> | null = null;

  /** Registers how to stop something just started. */
  add(name: string, stop: () => Promise<unknown> | unknown): void {
    this.steps.push({ name, stop });
  }

  get started(): boolean {
    return this.running !== null;
  }

  /** Stops everything registered, once; a step that fails or hangs does not keep the others running. */
  run(): Promise<void> {
    this.running ??= (async () => {
      for (const { name, stop } of this.steps.reverse()) {
        try {
          await withTimeout(Promise.resolve(stop()), 15_000, name);
        } catch (err) {
          console.error(`npm start: stopping ${name}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    })();
    return this.running;
  }

  /** Prints `line` (if any), stops everything, exits with `code`. */
  async exit(code: number, line?: string): Promise<never> {
    if (line) console.error(line);
    await this.run();
    process.exit(code);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} did not stop within ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
