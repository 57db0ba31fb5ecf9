import { HookbaseApiError, HookbaseConnectionError } from '@hookbase/sdk';

/** Exit codes (documented in the README). */
export const EXIT = {
  ok: 0,
  /** The API answered an error (its code is printed). */
  api: 1,
  /** Bad command line or input file. */
  usage: 2,
  /** Not logged in, or the stored configuration is unreadable. */
  config: 3,
  /** The API could not be reached. */
  network: 4,
} as const;

export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export const usage = (message: string) => new CliError('USAGE', message, EXIT.usage);

/** The exit code and the printed error for anything a command threw. */
export function describeError(error: unknown): {
  exitCode: number;
  error: { code: string; message: string; status?: number; details?: unknown };
} {
  if (error instanceof HookbaseApiError) {
    return {
      exitCode: EXIT.api,
      error: {
        code: error.code,
        message: error.message,
        status: error.status,
        details: error.details,
      },
    };
  }
  if (error instanceof HookbaseConnectionError) {
    return { exitCode: EXIT.network, error: { code: error.code, message: error.message } };
  }
  if (error instanceof CliError) {
    return { exitCode: error.exitCode, error: { code: error.code, message: error.message } };
  }
  throw error;
}
