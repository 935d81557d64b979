import type { GatehouseConfig } from '../config.js';
import { NotFoundError } from '../core/validation.js';
import type { Clock } from '../shared/clock.js';
import type { SqlStorage } from '../storage/sql/index.js';

export interface CommandContext {
  config: GatehouseConfig;
  storage: SqlStorage;
  json: boolean;
  out: NodeJS.WritableStream;
  /** Every time a command stamps (created_at, revoked_at, …) comes from here. */
  clock: Clock;
}

export type WithStorage = <T>(
  values: Record<string, unknown>,
  run: (context: CommandContext) => Promise<T>,
) => Promise<T>;

export function printJson(context: CommandContext, value: unknown): void {
  context.out.write(JSON.stringify(value, null, 2) + '\n');
}

/** The thing a command names is not there (exit 1, error "not_found" under --json). */
export function notFound(what: string): NotFoundError {
  return new NotFoundError(what, `no ${what}`);
}
