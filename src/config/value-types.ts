import { ConfigError } from './config-error.js';

/**
 * What a setting's variable may hold: how its text is read, and the values in words for the docs
 * table (docs/configuration.md). A value read wrong is refused naming the variable, the form expected
 * and what was given: a typo must not start a server with another setting than the operator meant.
 */
export interface ValueType<T> {
  /** The value `text` (never empty: empty is unset) stands for; a ConfigError naming `name` otherwise. */
  parse(text: string, name: string): T;
  /** The values allowed, in Markdown. */
  readonly values: string;
  /** A whole number's bounds: a flag that sets one is read as a number within them. */
  readonly range?: { min: number; max: number };
}

/** Text taken as it is: a path, a name, a token. */
export function text(values: string): ValueType<string> {
  return { parse: (value) => value, values };
}

export interface IntegerType extends ValueType<number> {
  /** Refuses a number given in code or by a flag that is out of the range, as parse refuses text. */
  check(value: number, name: string): number;
}

/** A whole number from `min` to `max` (a unit names what it counts in the message). */
export function integer(min: number, max: number, unit: string): IntegerType {
  const refuse = (name: string, given: unknown) =>
    new ConfigError(
      `${name} must be a whole number${unit === '' ? '' : ` of ${unit}`} between ${min} and ${max}, got ${JSON.stringify(given)}`,
    );
  const check = (value: number, name: string) => {
    if (!Number.isSafeInteger(value) || value < min || value > max) throw refuse(name, value);
    return value;
  };
  return {
    parse(value, name) {
      // Digits only: no fraction, sign, exponent or unit suffix ("30d") that Number() would read.
      if (!/^[0-9]+$/.test(value.trim())) throw refuse(name, value);
      const parsed = Number(value.trim());
      if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) throw refuse(name, value);
      return parsed;
    },
    check,
    range: { min, max },
    values: `\`${min}\` to \`${max}\`${unit === '' ? '' : ` ${unit}`}`,
  };
}

/** true or false, nothing else (no "1", "yes" or "on" that one reader takes and another does not). */
export const boolean: ValueType<boolean> = {
  parse(value, name) {
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(value)}`);
  },
  values: '`true` or `false`',
};

/** One of a few words, spelt exactly. */
export function oneOf<T extends string>(choices: readonly T[]): ValueType<T> {
  return {
    parse(value, name) {
      const known = choices.find((choice) => choice === value);
      if (known === undefined) {
        throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got ${JSON.stringify(value)}`);
      }
      return known;
    },
    values: choices.map((choice) => `\`${choice}\``).join(', '),
  };
}

/** An absolute https:// (or http://) URL. */
export const httpUrl: ValueType<string> = {
  parse(value, name) {
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      throw new ConfigError(
        `${name} must be an absolute https:// (or http://) URL, got ${JSON.stringify(value)}`,
      );
    }
    return value;
  },
  values: 'an absolute `https://` URL',
};

export function isPostgresUrl(url: string | undefined): boolean {
  return url !== undefined && /^postgres(ql)?:\/\//.test(url);
}

/** Where the store is: a PostgreSQL URL, or sqlite:PATH. The value is not echoed: it may hold a password. */
export const databaseUrl: ValueType<string> = {
  parse(value, name) {
    if (!isPostgresUrl(value) && !value.startsWith('sqlite:')) {
      throw new ConfigError(`${name} must be a postgres://… URL or sqlite:PATH, got another scheme`);
    }
    return value;
  },
  values: '`postgres://user@host:5432/db` or `sqlite:PATH`',
};

/** A mount prefix such as /api; "/" is none. */
export const basePath: ValueType<string> = {
  parse(value, name) {
    if (value === '/') return '';
    if (!/^(\/[a-z0-9-]+)+$/.test(value)) {
      throw new ConfigError(`${name} must look like /api (lower-case segments, no trailing slash)`);
    }
    return value;
  },
  values: 'lower-case path segments, such as `/api`',
};

/** Space-separated scope names (RFC 6749 §3.3), each once. */
export function scopeList(
  refused: readonly string[],
  why: string,
): ValueType<string[]> & {
  /** A list given in code, held to the same rules. */
  check(scopes: readonly string[], name: string): string[];
} {
  const check = (scopes: readonly string[], name: string) => {
    const unique = [...new Set(scopes)];
    for (const scope of unique) {
      if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)) {
        throw new ConfigError(`${name}: ${JSON.stringify(scope)} is not a scope name`);
      }
      if (refused.includes(scope)) throw new ConfigError(`${name}: ${scope} ${why}`);
    }
    return unique;
  };
  return {
    parse: (value, name) => check(value.split(/\s+/).filter(Boolean), name),
    check,
    values: `space-separated scope names, never ${refused.map((scope) => `\`${scope}\``).join(', ')}`,
  };
}

/**
 * The SMTP server mail goes out through: smtp:// (STARTTLS when the server offers it) or smtps://
 * (TLS from the start), user and password in the URL. Not echoed: it holds a password.
 */
export const smtpUrl: ValueType<string> = {
  parse(value, name) {
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '') {
      throw new ConfigError(
        `${name} must be smtp://user:password@host:587 or smtps://user:password@host:465 (another scheme, or no URL, was given); unset it to write mail to the log instead`,
      );
    }
    return value;
  },
  values: '`smtp://user:password@host:587` or `smtps://user:password@host:465`',
};

/** A mail's From: an address, or `Name <address>`; one line (no header can be slipped in after it). */
export const mailFrom: ValueType<string> = {
  parse(value, name) {
    if (/[\r\n]/.test(value) || !/^[^@\s<>]+@[^@\s<>]+$|^[^<>]*<[^@\s<>]+@[^@\s<>]+>$/.test(value)) {
      throw new ConfigError(
        `${name} must be an address (name@example.com) or "Name <name@example.com>", got ${JSON.stringify(value)}`,
      );
    }
    return value;
  },
  values: '`name@example.com` or `Name <name@example.com>`',
};
