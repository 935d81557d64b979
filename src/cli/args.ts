import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A usage error: printed with the command's help hint, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export const GLOBAL_OPTIONS = {
  'data-dir': { type: 'string' },
  'database-url': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export type Options = NonNullable<ParseArgsConfig['options']>;

type Parsed<T extends Options> = ReturnType<
  typeof parseArgs<{
    args: string[];
    options: typeof GLOBAL_OPTIONS & T;
    allowPositionals: true;
    strict: true;
  }>
>;

export function parseCommandArgs<T extends Options>(argv: string[], options: T): Parsed<T> {
  try {
    return parseArgs({
      args: argv,
      options: { ...GLOBAL_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** `gatehouse clients --help`: the flag stands where the action would, so parseArgs never sees it. */
export function isHelpFlag(arg: string | undefined): boolean {
  return arg === '--help' || arg === '-h';
}

/** Reads all of standard input (for --password-stdin), without the final newline. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}
