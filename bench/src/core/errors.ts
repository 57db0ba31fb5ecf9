/**
 * A scenario that cannot run against this build (the API refuses a feature it needs). Not a
 * failure of the harness nor a void run: the CLI says why and exits with code 2.
 */
export class ScenarioUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScenarioUnavailable';
  }
}

export const EXIT = { ok: 0, void: 1, unavailable: 2, usage: 64 } as const;
