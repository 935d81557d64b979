import { randomUUID } from 'node:crypto';
import { isoTime, type Clock } from '../../shared/clock.js';
import { randomToken, sha256 } from '../../shared/crypto.js';
import {
  INITIAL_ACCESS_TOKEN_MAX_TTL,
  INITIAL_ACCESS_TOKEN_TTL,
  NEVER_REGISTRABLE_SCOPES,
} from './dynamic-registration.js';
import { AuditLog, UNATTRIBUTED, type AuditContext } from '../audit/audit-log.js';
import type { InitialAccessToken } from '../model.js';
import type { Storage } from '../ports.js';
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
 * initial-access-tokens`, /v1/initial-access-tokens). A token registers any number of clients until it
 * expires or is deleted (docs/decisions.md, decision 20); each is shown once, when made, and stored as
 * its SHA-256 only. Making and deleting one are audit events (decision 41) whose before and after are
 * the view: never the token, nor its hash.
 */
export class InitialAccessTokenRegistry {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly audit: AuditLog = new AuditLog(storage, clock),
  ) {}

  async create(
    input: InitialAccessTokenInput,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<{ token: string; view: InitialAccessTokenView }> {
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
    const stored: InitialAccessToken = {
      id: randomUUID(),
      hash: sha256(token),
      scopes,
      createdAt: now,
      expiresAt: now + expiresIn,
      clientsRegistered: 0,
    };
    const view = viewInitialAccessToken(stored, now);
    await this.audit.change(context, async (storage, record) => {
      await storage.initialAccessTokens.insert(stored);
      await record({ type: 'initial-access-token.created', after: view });
    });
    return { token, view };
  }

  async list(): Promise<InitialAccessTokenView[]> {
    const now = this.clock.now();
    return (await this.storage.initialAccessTokens.list()).map((token) => viewInitialAccessToken(token, now));
  }

  /** A page of the tokens, oldest first, and how many there are. */
  async page(limit: number, offset: number): Promise<{ items: InitialAccessTokenView[]; total: number }> {
    const now = this.clock.now();
    const { items, total } = await this.storage.initialAccessTokens.page(limit, offset);
    return { items: items.map((token) => viewInitialAccessToken(token, now)), total };
  }

  /** The token's view, or a NotFoundError. */
  async get(id: string): Promise<InitialAccessTokenView> {
    const token = await this.storage.initialAccessTokens.get(id);
    if (token === undefined) throw noSuchToken(id);
    return viewInitialAccessToken(token, this.clock.now());
  }

  /** Deletes the token: it registers nothing more; the clients it registered stay. */
  async delete(id: string, context: AuditContext = UNATTRIBUTED): Promise<void> {
    await this.audit.change(context, async (storage, record) => {
      const token = await storage.initialAccessTokens.get(id);
      if (token === undefined || !(await storage.initialAccessTokens.delete(id))) throw noSuchToken(id);
      await record({
        type: 'initial-access-token.deleted',
        before: viewInitialAccessToken(token, this.clock.now()),
      });
    });
  }
}

const noSuchToken = (id: string) => new NotFoundError('id', `no initial access token with id ${id}`);
