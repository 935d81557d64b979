import { ConfigError } from './config/config-error.js';
import type { SecretOptions } from './config/server-secret.js';
import {
  SETTINGS,
  TOOL_VARIABLES,
  type ConfigInput,
  type GatehouseConfig,
  type SettingContext,
  type Variables,
} from './config/settings.js';
import { didYouMean } from './shared/did-you-mean.js';

export { ConfigError } from './config/config-error.js';
export {
  DEFAULT_RATE_LIMITS,
  RATE_LIMITED_ENDPOINTS,
  type RateLimit,
  type RateLimitedEndpoint,
} from './config/rate-limits.js';
export type { SecretOptions } from './config/server-secret.js';
export {
  DEFAULT_DYNAMIC_REGISTRATION_SCOPES,
  SETTINGS,
  type ConfigInput,
  type GatehouseConfig,
} from './config/settings.js';

/** A setting's name: a GatehouseConfig field, a row of SETTINGS. */
export type SettingName = keyof GatehouseConfig;

/** The rows in the table's order, which is the order they are loaded in. */
const NAMES = Object.keys(SETTINGS) as SettingName[];

/** Every variable a row declares: nothing else is read. */
const DECLARED = new Set(NAMES.flatMap((name) => SETTINGS[name].variables));

/** The variables of secret rows: a message about one never repeats its value. */
const SECRET_VARIABLES = new Set(
  NAMES.flatMap((name) => (SETTINGS[name].secret ? SETTINGS[name].variables : [])),
);

function variablesOf(env: NodeJS.ProcessEnv): Variables {
  const text = (name: string) => {
    // A variable read but declared by no row would escape the docs and the unknown-variable warning.
    if (!DECLARED.has(name)) throw new Error(`${name} is read, but no row of the settings table declares it`);
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  };
  return {
    text,
    read(name, type) {
      const value = text(name);
      if (value === undefined) return undefined;
      try {
        return type.parse(value, name);
      } catch (error) {
        const echoed = JSON.stringify(value);
        if (
          !SECRET_VARIABLES.has(name) ||
          !(error instanceof ConfigError) ||
          !error.message.includes(echoed)
        ) {
          throw error;
        }
        throw new ConfigError(error.message.replaceAll(echoed, 'a value not shown here (a secret)'));
      }
    },
  };
}

/** The settings loaded so far; reading one below is a mistake in the table's order, found at once. */
function loadedAbove(loaded: Partial<GatehouseConfig>): Readonly<GatehouseConfig> {
  return new Proxy(loaded, {
    get(target, property, receiver) {
      if (typeof property === 'string' && !(property in target)) {
        throw new Error(`the settings table reads ${property} before it is loaded: move its row up`);
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  }) as Readonly<GatehouseConfig>;
}

/** One setting: from the input (a flag, or code), else its variables, else its default. */
function loadSetting<K extends SettingName>(
  name: K,
  input: ConfigInput,
  context: SettingContext,
): GatehouseConfig[K] {
  type Given = Exclude<ConfigInput[K], undefined>;
  const row = SETTINGS[name];
  const given = (input as Partial<Record<SettingName, unknown>>)[name] as Given | undefined;
  if ('load' in row) return row.load(given, context);
  const label = row.flag === undefined ? name : `--${row.flag}`;
  // Without fromInput the input is of the setting's own type (SettingsTable: ConfigInput differs
  // only for the secret and the rate limits, whose rows read their input themselves).
  const value =
    given === undefined
      ? undefined
      : row.fromInput !== undefined
        ? row.fromInput(given, label)
        : (given as GatehouseConfig[K]);
  if (value !== undefined) return value;
  const own = row.variables[0];
  const fromVariables =
    row.read !== undefined
      ? row.read(context.variables)
      : row.type !== undefined && own !== undefined
        ? context.variables.read(own, row.type)
        : undefined;
  if (fromVariables !== undefined) return fromVariables;
  return 'derive' in row ? row.derive(context) : row.default;
}

function assign<K extends SettingName>(target: Partial<GatehouseConfig>, name: K, value: GatehouseConfig[K]) {
  target[name] = value;
}

function contextOf(env: NodeJS.ProcessEnv, options: SecretOptions, loaded: Partial<GatehouseConfig>) {
  return { settings: loadedAbove(loaded), variables: variablesOf(env), options };
}

/**
 * Merges explicit options over the environment over the defaults, row by row of the settings table
 * (config/settings.ts). A malformed value is a ConfigError naming the variable (or flag), the form
 * expected and the value given.
 */
export function loadConfig(
  input: ConfigInput = {},
  environment: NodeJS.ProcessEnv = process.env,
  options: SecretOptions = {},
): GatehouseConfig {
  const loaded: Partial<GatehouseConfig> = {};
  const context = contextOf(environment, options, loaded);
  for (const name of NAMES) assign(loaded, name, loadSetting(name, input, context));
  // Every row has been loaded: the object is whole.
  return loaded as GatehouseConfig;
}

/** Where the store is (data directory, database URL), from the options over the environment. */
export function storeLocation(
  input: Pick<ConfigInput, 'dataDir' | 'databaseUrl'>,
  env: NodeJS.ProcessEnv = process.env,
): { dataDir: string; databaseUrl: string | undefined } {
  const context = contextOf(env, {}, {});
  return {
    dataDir: loadSetting('dataDir', input, context),
    databaseUrl: loadSetting('databaseUrl', input, context),
  };
}

/**
 * Every GATEHOUSE_* variable Gatehouse itself reads: the settings table's, and the tools'. Any
 * other is most likely a misspelling, which would otherwise leave its setting at the default without
 * a word.
 */
const KNOWN_VARIABLES: readonly string[] = [
  ...[...DECLARED].filter((name) => name.startsWith('GATEHOUSE_')),
  ...TOOL_VARIABLES,
];

/**
 * One warning per GATEHOUSE_* variable that nothing reads, with the closest known name when one is
 * near. `alsoKnown`: names read by code outside the settings table.
 */
export function unknownVariableWarnings(
  env: NodeJS.ProcessEnv = process.env,
  alsoKnown: Iterable<string> = [],
): string[] {
  const known = new Set([...KNOWN_VARIABLES, ...alsoKnown]);
  const warnings: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('GATEHOUSE_') || known.has(name)) continue;
    const hint = didYouMean(name, known);
    warnings.push(`unknown environment variable ${name} is ignored${hint}`);
  }
  return warnings;
}

/** The flag that sets `name` (`--tls-cert`), for messages that tell the operator what to set. */
export function flagOf(name: SettingName): string {
  const flag = SETTINGS[name].flag;
  if (flag === undefined) throw new Error(`no flag sets ${name}`);
  return `--${flag}`;
}

/** The variable that sets `name` (`GATEHOUSE_TLS_CERT`), for messages that tell the operator what to set. */
export function variableOf(name: SettingName): string {
  const variable = SETTINGS[name].variables[0];
  if (variable === undefined) throw new Error(`no variable sets ${name}`);
  return variable;
}
