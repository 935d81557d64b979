import type { GatehouseConfig } from '../config.js';
import type { Engine } from '../core/engine.js';
import { NotFoundError } from '../core/validation.js';

export interface CommandContext {
  config: GatehouseConfig;
  /** Every operation a command performs; every time it stamps comes from the engine's clock. */
  engine: Engine;
  json: boolean;
  out: NodeJS.WritableStream;
}

/** Runs a command on an engine over the existing store (compose's openEngine), closed after it. */
export type WithEngine = <T>(
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
