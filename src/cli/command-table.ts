import { SETTINGS } from '../config/settings.js';
import { boolean } from '../config/value-types.js';
import type { Options } from './args.js';

/**
 * Every command, its actions and their flags, declared once. The parser enforces the flags marked
 * `required` (parseCommandArgs), "did you mean" draws its candidates from here, and
 * `gatehouse completion bash` is generated from it. A flag's `required` mirrors its usage line in
 * help.ts, where a required flag stands outside [brackets]; test/unit/cli-command-table.test.ts
 * holds the two together. Importing this module costs nothing: the command modules are loaded by
 * main.ts only when run.
 */

/** A flag: parseArgs' declaration, plus `required` (refused with exit 2 when missing). */
export type FlagSpec = Options[string] & { required?: true };
export type Flags = Record<string, FlagSpec>;

export interface ActionSpec {
  flags: Flags;
  /** How many arguments that are not flags it takes (an id, a name). */
  positionals: number;
}

export interface CommandSpec {
  /** Actions (`clients create`); absent for a command that has none (`serve`). */
  actions?: Record<string, ActionSpec>;
  /** The flags of a command without actions. */
  flags?: Flags;
  /** Words completed after the command (`completion bash`). */
  words?: string[];
}

/** Flags every command takes (args.ts parses them for each). */
export const GLOBAL_FLAGS = {
  'data-dir': { type: 'string' },
  'database-url': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Flags;

/** A client's settings, as `clients create` and `clients update` take them (commands/clients.ts parses them). */
export const CLIENT_SETTINGS = {
  name: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  'grant-types': { type: 'string' },
  scopes: { type: 'string' },
  'token-type': { type: 'string' },
  'post-logout-redirect-uri': { type: 'string', multiple: true },
  'id-token-signed-response-alg': { type: 'string' },
  'auth-method': { type: 'string' },
  'jwks-uri': { type: 'string' },
  'jwks-file': { type: 'string' },
  'require-par': { type: 'boolean' },
  'no-require-par': { type: 'boolean' },
  'require-dpop': { type: 'boolean' },
  'no-require-dpop': { type: 'boolean' },
  'require-mfa': { type: 'boolean' },
  'no-require-mfa': { type: 'boolean' },
  'exchange-target': { type: 'string', multiple: true },
  'identity-providers': { type: 'string' },
  'all-identity-providers': { type: 'boolean' },
} as const satisfies Flags;

/**
 * An identity provider's settings, as `idps create` and `idps update` take them (commands/idps.ts
 * parses them; decision 39).
 */
export const IDP_SETTINGS = {
  name: { type: 'string' },
  issuer: { type: 'string' },
  'authorization-endpoint': { type: 'string' },
  'token-endpoint': { type: 'string' },
  'userinfo-endpoint': { type: 'string' },
  'client-id': { type: 'string' },
  'client-auth': { type: 'string' },
  'client-secret-stdin': { type: 'boolean' },
  scopes: { type: 'string' },
  'subject-claim': { type: 'string' },
  'username-claim': { type: 'string' },
  'email-claim': { type: 'string' },
  'email-verified-claim': { type: 'string' },
  'name-claim': { type: 'string' },
  'link-by-verified-email': { type: 'boolean' },
  'trust-upstream-assurance': { type: 'boolean' },
  'required-acr': { type: 'string' },
  'logo-uri': { type: 'string' },
} as const satisfies Flags;

/** What `idps update` takes beyond the settings: the switches' "off". */
export const IDP_UPDATE_FLAGS = {
  ...IDP_SETTINGS,
  'no-link-by-verified-email': { type: 'boolean' },
  'no-trust-upstream-assurance': { type: 'boolean' },
} as const satisfies Flags;

const none = { flags: {}, positionals: 0 } as const;
const byId = { flags: {}, positionals: 1 } as const;

/**
 * How serve is reached: the flags of the settings table (config/settings.ts) that are not every
 * command's. check takes the same flags, so it checks what serve would run with.
 */
const SERVER_SETTINGS: Flags = Object.fromEntries(
  Object.values(SETTINGS).flatMap((row) =>
    row.flag === undefined || row.flag in GLOBAL_FLAGS
      ? []
      : [[row.flag, { type: row.type === boolean ? 'boolean' : 'string' } satisfies FlagSpec]],
  ),
);

export const COMMANDS = {
  serve: { flags: { ...SERVER_SETTINGS, workers: { type: 'string' } } },
  init: { flags: {} },
  migrate: { flags: {} },
  check: { flags: SERVER_SETTINGS },
  clients: {
    actions: {
      create: {
        flags: { ...CLIENT_SETTINGS, name: { type: 'string', required: true }, public: { type: 'boolean' } },
        positionals: 0,
      },
      list: { flags: { registration: { type: 'string' } }, positionals: 0 },
      show: byId,
      update: { flags: CLIENT_SETTINGS, positionals: 1 },
      'rotate-secret': byId,
      delete: byId,
    },
  },
  users: {
    actions: {
      create: {
        flags: {
          username: { type: 'string', required: true },
          'password-stdin': { type: 'boolean', required: true },
          email: { type: 'string' },
          name: { type: 'string' },
          admin: { type: 'boolean' },
        },
        positionals: 0,
      },
      list: none,
      show: { flags: { username: { type: 'string' } }, positionals: 1 },
      update: {
        flags: {
          username: { type: 'string' },
          'new-username': { type: 'string' },
          email: { type: 'string' },
          name: { type: 'string' },
          admin: { type: 'boolean' },
          'no-admin': { type: 'boolean' },
          disabled: { type: 'boolean' },
          enabled: { type: 'boolean' },
        },
        positionals: 1,
      },
      'set-password': {
        flags: { username: { type: 'string' }, 'password-stdin': { type: 'boolean', required: true } },
        positionals: 1,
      },
      delete: { flags: { username: { type: 'string' } }, positionals: 1 },
      'reset-mfa': { flags: { username: { type: 'string' } }, positionals: 1 },
      // Decision 39: the user's links to upstream identity providers, and removing one.
      links: { flags: { username: { type: 'string' } }, positionals: 1 },
      unlink: { flags: { username: { type: 'string' } }, positionals: 2 },
    },
  },
  idps: {
    actions: {
      create: {
        flags: {
          ...IDP_SETTINGS,
          id: { type: 'string' },
          name: { type: 'string', required: true },
          'client-id': { type: 'string', required: true },
        },
        positionals: 0,
      },
      list: none,
      show: byId,
      update: { flags: IDP_UPDATE_FLAGS, positionals: 1 },
      delete: byId,
    },
  },
  audit: {
    actions: {
      list: {
        flags: {
          type: { type: 'string', multiple: true },
          user: { type: 'string' },
          client: { type: 'string' },
          since: { type: 'string' },
          until: { type: 'string' },
          limit: { type: 'string' },
          cursor: { type: 'string' },
        },
        positionals: 0,
      },
    },
  },
  grants: {
    actions: {
      list: { flags: { user: { type: 'string' }, client: { type: 'string' } }, positionals: 0 },
      revoke: byId,
    },
  },
  scopes: {
    actions: {
      create: { flags: { description: { type: 'string', required: true } }, positionals: 1 },
      list: none,
      delete: byId,
    },
  },
  resources: {
    actions: {
      create: {
        flags: {
          uri: { type: 'string', required: true },
          scopes: { type: 'string' },
          name: { type: 'string' },
        },
        positionals: 0,
      },
      list: none,
      delete: byId,
    },
  },
  keys: {
    actions: { rotate: none, list: none, revoke: byId },
  },
  'initial-access-tokens': {
    actions: {
      create: { flags: { 'expires-in': { type: 'string' }, scopes: { type: 'string' } }, positionals: 0 },
      list: none,
      delete: byId,
    },
  },
  completion: { flags: {}, words: ['bash'] },
  version: { flags: {} },
  help: { flags: {}, words: [] },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

export const COMMAND_NAMES = Object.keys(COMMANDS) as CommandName[];

export function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/** The spec of `command` (and its `action`), or undefined; `name` as messages say it: "scopes create". */
export function specOf(name: string): ActionSpec | undefined {
  const [command, action] = name.split(' ');
  if (command === undefined || !isCommandName(command)) return undefined;
  const spec: CommandSpec = COMMANDS[command];
  if (spec.actions === undefined) return { flags: spec.flags ?? {}, positionals: 0 };
  return action === undefined ? undefined : spec.actions[action];
}
