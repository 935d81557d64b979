import { parseArgs, type ParseArgsConfig } from 'node:util';
import { didYouMean } from '../shared/did-you-mean.js';
import { GLOBAL_FLAGS, specOf, type FlagSpec } from './command-table.js';
import type { CliIo, TextSource } from './context.js';

const GLOBAL_OPTIONS = GLOBAL_FLAGS;

/** A usage error: printed with the command's help hint, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export type Options = NonNullable<ParseArgsConfig['options']>;

type Parsed<T extends Options> = ReturnType<
  typeof parseArgs<{
    args: string[];
    options: typeof GLOBAL_OPTIONS & T;
    allowPositionals: true;
    strict: true;
  }>
>;

/** node's parser messages, in the words of this command line; a mistyped flag gets the nearest one. */
function plainUsageError(error: unknown, command: string, options: Options): UsageError {
  const { code, message } = error as { code?: string; message?: string };
  const option = /'(-[^' ]+)/.exec(message ?? '')?.[1] ?? 'an option';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const known = Object.keys(options).map((name) => `--${name}`);
      const typed = option.includes('=') ? option.slice(0, option.indexOf('=')) : option;
      return new UsageError(`${command} has no option ${option}${didYouMean(typed, known, 2)}`);
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /does not take an argument/.test(message ?? '')
        ? new UsageError(`${option} takes no value (${command})`)
        : new UsageError(
            `${option} needs a value (${command}); a value starting with "-" is written ${option}=VALUE`,
          );
    default:
      return new UsageError(`${command}: cannot read the arguments`);
  }
}

/**
 * Ids drawn from base64url may begin with "-" (a signing key's id is its JWK thumbprint, RFC 7638), and
 * node's parser would read `gatehouse keys revoke -Iq…` as an unknown option. An argument of one dash
 * and two or more id characters that are not all known short flags is taken as a positional argument,
 * as if written after `--`; options keep their places and values.
 */
function dashedIdsAsPositionals(argv: string[], options: Options): string[] {
  const shortFlags = new Map<string, 'string' | 'boolean'>();
  const longWithValue = new Set<string>();
  for (const [name, option] of Object.entries(options)) {
    if (option.short !== undefined) shortFlags.set(option.short, option.type);
    if (option.type === 'string') longWithValue.add(`--${name}`);
  }
  const kept: string[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      kept.push(arg);
      if (longWithValue.has(arg) && i + 1 < argv.length) kept.push(argv[++i] as string);
    } else if (arg.startsWith('-') && arg.length > 1) {
      const letters = arg.slice(1);
      if ([...letters].every((letter) => shortFlags.has(letter))) {
        kept.push(arg);
        if (shortFlags.get(letters.at(-1) as string) === 'string' && i + 1 < argv.length) {
          kept.push(argv[++i] as string);
        }
      } else if (letters.length >= 2 && /^[A-Za-z0-9_-]+$/.test(letters)) positionals.push(arg);
      else kept.push(arg);
    } else positionals.push(arg);
  }
  return positionals.some((arg) => arg.startsWith('-')) ? [...kept, '--', ...positionals] : argv;
}

/**
 * Parses one command's arguments. `command` names it in messages ("clients create"); at most
 * `maxPositionals` arguments that are not options are allowed.
 */
export function parseCommandArgs<T extends Options>(
  argv: string[],
  options: T,
  command = 'gatehouse',
  maxPositionals = Infinity,
): Parsed<T> {
  let parsed: Parsed<T>;
  const all: Options = { ...GLOBAL_OPTIONS, ...withoutRequired(options) };
  try {
    parsed = parseArgs({
      args: dashedIdsAsPositionals(argv, all),
      options: all as typeof GLOBAL_OPTIONS & T,
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw plainUsageError(err, command, all);
  }
  if ((parsed.values as { help?: boolean }).help === true) return parsed;
  const extra = parsed.positionals[maxPositionals];
  if (extra !== undefined) throw new UsageError(`${command}: unexpected argument "${extra}"`);
  const values = parsed.values as Record<string, unknown>;
  for (const flag of requiredFlags(command, options)) {
    if (values[flag] === undefined) {
      throw new UsageError(`${command} needs --${flag} (see gatehouse ${command.split(' ')[0]} --help)`);
    }
  }
  return parsed;
}

/** parseArgs' own declaration of each option: `required` is ours. */
function withoutRequired(options: Options): Options {
  const plain: Options = {};
  for (const [name, option] of Object.entries(options)) {
    const copy: FlagSpec = { ...option };
    delete copy.required;
    plain[name] = copy;
  }
  return plain;
}

/**
 * The flags `command` ("scopes create") cannot run without: those its entry in the command table
 * marks required, and any its caller's options mark so.
 */
function requiredFlags(command: string, options: Options): string[] {
  const required = new Set<string>();
  for (const flags of [specOf(command)?.flags ?? {}, options as Record<string, FlagSpec>]) {
    for (const [name, flag] of Object.entries(flags)) if (flag.required === true) required.add(name);
  }
  return [...required];
}

/** `gatehouse clients --help`: the flag stands where the action would, so parseArgs never sees it. */
export function isHelpFlag(arg: string | undefined): boolean {
  return arg === '--help' || arg === '-h';
}

/** A whole number in [min, max] from a flag, or undefined when the flag is absent. */
export function integerFlag(
  value: string | undefined,
  flag: string,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
    throw new UsageError(`${flag} must be between ${min} and ${max}, got "${value}"`);
  }
  return parsed;
}

/** Reads all of standard input (for --password-stdin), without the final newline. */
async function readStdin(input: TextSource): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/**
 * Reads one line from the terminal without echoing it: the terminal goes to raw mode and each key is
 * handled here (backspace, Ctrl-C, Ctrl-D), so the password never appears on screen or in scrollback.
 */
function promptHidden(
  io: Pick<CliIo, 'stdin' | 'stderr'>,
  prompt: string,
  nothingGiven = 'no password given',
): Promise<string> {
  const input = io.stdin;
  const output = io.stderr;
  return new Promise((resolve, reject) => {
    let value = '';
    // Raw mode first: a key typed the moment the prompt shows must not be echoed.
    input.setRawMode?.(true);
    output.write(prompt);
    input.resume();
    input.setEncoding('utf8');
    const finish = (error?: Error) => {
      input.setRawMode?.(false);
      input.pause();
      input.removeListener('data', onData);
      output.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return finish();
        if (char === '\u0003') return finish(new UsageError('interrupted'));
        if (char === '\u0004') {
          if (value === '') return finish(new UsageError(nothingGiven));
          return finish();
        }
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else if (char >= ' ') value += char;
      }
    };
    input.on('data', onData);
  });
}

/**
 * The password for --password-stdin: from a pipe as it comes; on a terminal, asked for twice
 * without echo.
 */
export async function readPassword(io: Pick<CliIo, 'stdin' | 'stderr'>): Promise<string> {
  if (io.stdin.isTTY !== true) return readStdin(io.stdin);
  const password = await promptHidden(io, 'Password: ');
  const again = await promptHidden(io, 'Repeat password: ');
  if (password !== again) throw new UsageError('the two passwords differ; nothing was changed');
  return password;
}

/**
 * A secret another server issued (`idps create --client-secret-stdin`): from a pipe as it comes; on a
 * terminal, asked for once without echo (it is pasted, not made up, so there is nothing to repeat).
 */
export async function readSecret(io: Pick<CliIo, 'stdin' | 'stderr'>, prompt: string): Promise<string> {
  if (io.stdin.isTTY !== true) return readStdin(io.stdin);
  return promptHidden(io, prompt, 'no secret given');
}
