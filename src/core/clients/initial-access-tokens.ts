import { randomUUID } from 'node:crypto';
import { isoTime, type Clock } from '../../shared/clock.js';
import { randomToken, sha256 } from '../../shared/crypto.js';
import {
  INITIAL_ACCESS_TOKEN_MAX_TTL,
  INITIAL_ACCESS_TOKEN_TTL,
  NEVER_REGISTRABLE_SCOPES,
} from './dynamic-registration.js';
import type { InitialAccessToken } from '../model.js';
import type { InitialAccessTokenStore } from '../ports.js';
import { isValidScopeName } from '../scopes/scopes.js';
import { NotFoundError, ValidationError } from '../validation.js';

/** An initial access token as operators see it: never the token, nor its hash. */
export interface InitialAccessTokenView {
  id: string;
  /** The scopes clients it registers may have; null: those open registration allows. */
  scopes: string[] | null;
  created_at: string;
  expires_at: string;
  expired: boolean;
  clients_registered: number;
}

export function viewInitialAccessToken(token: InitialAccessToken, now: number): InitialAccessTokenView {
  return {
    id: token.id,
    scopes: token.scopes,
    created_at: isoTime(token.createdAt),
    expires_at: isoTime(token.expiresAt),
    expired: token.expiresAt <= now,
    clients_registered: token.clientsRegistered,
  };
}

export interface InitialAccessTokenInput {
  /** Seconds until it expires; a day by default. */
  expiresIn?: number;
  /** The scopes the clients it registers may have (never admin); those open registration allows when absent. */
  scopes?: string[];
}

/**
 * RFC 7591 §3 initial access tokens, as operators make, list and delete them (`gatehouse
 * initial-access-tokens`). A token registers any number of clients until it expires or is deleted
 * (docs/decisions.md, decision 20); each is shown once, when made, and stored as its SHA-256 only.
 */
export class InitialAccessTokenRegistry {
  constructor(
    private readonly store: InitialAccessTokenStore,
    private readonly clock: Clock,
  ) {}

  async create(input: InitialAccessTokenInput): Promise<{ token: string; view: InitialAccessTokenView }> {
    const expiresIn = input.expiresIn ?? INITIAL_ACCESS_TOKEN_TTL;
    if (!Number.isSafeInteger(expiresIn) || expiresIn < 60 || expiresIn > INITIAL_ACCESS_TOKEN_MAX_TTL) {
      throw new ValidationError(
        'expires_in',
        `must be a whole number of seconds from 60 to ${INITIAL_ACCESS_TOKEN_MAX_TTL}`,
      );
    }
    let scopes: string[] | null = null;
    if (input.scopes !== undefined) {
      scopes = [...new Set(input.scopes)];
      for (const name of scopes) {
        if (!isValidScopeName(name)) throw new ValidationError('scopes', `malformed scope name "${name}"`);
        if (NEVER_REGISTRABLE_SCOPES.includes(name)) {
          throw new ValidationError('scopes', `${name} is never open to clients that register themselves`);
        }
      }
    }
    const now = this.clock.now();
    const token = randomToken('iat_');
    const record: InitialAccessToken = {
      id: randomUUID(),
      hash: sha256(token),
      scopes,
      createdAt: now,
      expiresAt: now + expiresIn,
      clientsRegistered: 0,
    };
    await this.store.insert(record);
    return { token, view: viewInitialAccessToken(record, now) };
  }

  async list(): Promise<InitialAccessTokenView[]> {
    const now = this.clock.now();
    return (await this.store.list()).map((token) => viewInitialAccessToken(token, now));
  }

  /** Deletes the token: it registers nothing more; the clients it registered stay. */
  async delete(id: string): Promise<void> {
    if (!(await this.store.delete(id))) {
      throw new NotFoundError('id', `no initial access token with id ${id}`);
    }
  }
}
