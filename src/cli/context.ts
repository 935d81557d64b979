import type { GatehouseConfig } from '../config.js';
import type { SqlStorage } from '../storage/sql/index.js';

export interface CommandContext {
  config: GatehouseConfig;
  storage: SqlStorage;
  json: boolean;
  out: NodeJS.WritableStream;
}

export type WithStorage = <T>(
  values: Record<string, unknown>,
  run: (context: CommandContext) => Promise<T>,
) => Promise<T>;

export function printJson(context: CommandContext, value: unknown): void {
  context.out.write(JSON.stringify(value, null, 2) + '\n');
}
