import type { Clock } from '../../shared/clock.js';
import type { Client } from '../model.js';
import type { ClientMetadataFetcher, ClientStore, Storage } from '../ports.js';
import { AuditLog, UNATTRIBUTED } from '../audit/audit-log.js';
import { OAuthError } from '../errors.js';
import { ValidationError } from '../validation.js';
import { registerScopesOf } from '../scopes/scope-registry.js';
import { clientInputFromMetadata } from './dynamic-registration.js';
import { validateClientInput, viewClient } from './client-registry.js';
import { hostAllowed, type HostRule } from './metadata-document-hosts.js';

export { hostAllowed, parseHostRule, type HostRule } from './metadata-document-hosts.js';

/** The longest client_id URL taken: longer ones are not looked up, nor fetched. */
export const MAX_DOCUMENT_CLIENT_ID_LENGTH = 1000;

/**
 * How long a fetched document stands (decision 46): its HTTP caching (`Cache-Control: max-age`,
 * `Expires`), held between a floor, so that a document saying `no-store` cannot make every request a
 * fetch, and a ceiling, so that a changed or withdrawn document is seen within a day; an answer that
 * says nothing stands for the default.
 */
export const DOCUMENT_CACHE_BOUNDS = {
  minSeconds: 60,
  maxSeconds: 86_400,
  defaultSeconds: 3_600,
} as const;

/** Fetches of documents on one host within one minute, across every process (decision 46). */
export const DOCUMENT_FETCHES_PER_HOST_PER_MINUTE = 60;

/** What the server takes from Client ID Metadata Documents (decision 46). */
export interface ClientMetadataDocumentPolicy {
  /** GATEHOUSE_CLIENT_ID_METADATA_DOCUMENTS=on. Off: an https client_id is only ever a stored client's. */
  enabled: boolean;
  /** GATEHOUSE_CLIENT_ID_METADATA_HOSTS: the hosts whose documents are fetched, and those never. */
  hosts: HostRule;
  /** The issuer: no redirect URI of such a client may be on its origin (as in registration). */
  issuer: string;
  /** The scopes such a client may have: the open registration's (GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES). */
  scopes: readonly string[];
  /** Names no such client may take, nor any that looks like one: the product's. */
  reservedNames: readonly string[];
  /**
   * GATEHOUSE_ALLOW_PRIVATE_JWKS_URI: a document's `jwks_uri` is a `jwks_uri` like any (decision 21), a
   * literal non-public one refused unless it is set.
   */
  allowPrivateJwksUri: boolean;
}

export const DOCUMENTS_OFF: ClientMetadataDocumentPolicy = {
  enabled: false,
  hosts: { allow: [], deny: [] },
  issuer: 'https://invalid.example',
  scopes: [],
  reservedNames: [],
  allowPrivateJwksUri: false,
};

/**
 * Why a Client ID Metadata Document could not be used. The message is for the person at the browser
 * (the authorization request's error page) and the operator's log: it names the document's host and
 * what was wrong, never anything the server holds.
 */
export class ClientMetadataDocumentError extends Error {
  override name = 'ClientMetadataDocumentError';
}

/**
 * Whether `id` has the form of a Client ID Metadata Document's URL (draft-ietf-oauth-client-id-metadata-
 * document §3): https, with a path, no fragment, no user information, and no dot segments. It must be
 * its own WHATWG serialisation, so the URL fetched and the id compared are one string (an upper-case host,
 * a default port or a dot segment would each make them two).
 */
export function isDocumentClientId(id: string): boolean {
  if (id.length > MAX_DOCUMENT_CLIENT_ID_LENGTH || !id.startsWith('https://')) return false;
  let url: URL;
  try {
    url = new URL(id);
  } catch {
    return false;
  }
  return (
    url.href === id &&
    url.pathname !== '/' &&
    url.hash === '' &&
    !id.includes('#') &&
    url.username === '' &&
    url.password === ''
  );
}

/** The host shown beside the client's name, and counted by the rate limits: the id's, with its port. */
export function documentHost(client: Pick<Client, 'id' | 'registration'>): string | undefined {
  if (client.registration !== 'document') return undefined;
  try {
    return new URL(client.id).host;
  } catch {
    return undefined;
  }
}

/** `{ clientHost }` for a document's client, to spread into what a page is given; `{}` for any other. */
export function clientHostField(client: Pick<Client, 'id' | 'registration'>): { clientHost?: string } {
  const host = documentHost(client);
  return host === undefined ? {} : { clientHost: host };
}

/** `max-age` held to the bounds; the default when the answer said nothing. */
export function documentLifetime(maxAgeSeconds: number | undefined): number {
  const { minSeconds, maxSeconds, defaultSeconds } = DOCUMENT_CACHE_BOUNDS;
  if (maxAgeSeconds === undefined || !Number.isFinite(maxAgeSeconds)) return defaultSeconds;
  return Math.min(maxSeconds, Math.max(minSeconds, Math.floor(maxAgeSeconds)));
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Shared-secret methods: a document is public, so it can describe no secret (draft §4.1). */
const SECRET_METHODS = ['client_secret_basic', 'client_secret_post', 'client_secret_jwt'];

/**
 * The client a fetched document describes, held to the rules of self-registration (decision 20) and
 * of the draft (§4.1): its `client_id` is the URL, it holds no secret, and it is public (`none`, the
 * default here) or authenticates with `private_key_jwt`. Throws ClientMetadataDocumentError saying
 * what is wrong.
 */
export function clientFromDocument(
  id: string,
  document: unknown,
  policy: ClientMetadataDocumentPolicy,
  now: number,
  maxAgeSeconds: number | undefined,
  stored: Client | undefined,
): Client {
  if (!isObject(document)) throw new ClientMetadataDocumentError('the document is not a JSON object');
  if (document.client_id !== id) {
    throw new ClientMetadataDocumentError('the document\'s "client_id" is not the URL it was fetched from');
  }
  if (document.client_secret !== undefined || document.client_secret_expires_at !== undefined) {
    throw new ClientMetadataDocumentError(
      'the document holds a client secret, which a public document cannot',
    );
  }
  const method = document.token_endpoint_auth_method ?? 'none';
  if (typeof method === 'string' && SECRET_METHODS.includes(method)) {
    throw new ClientMetadataDocumentError(
      `token_endpoint_auth_method "${method}" needs a shared secret: use "none" or "private_key_jwt"`,
    );
  }
  let settings;
  try {
    const input = clientInputFromMetadata(
      { ...document, token_endpoint_auth_method: method },
      { scopes: policy.scopes },
      {
        issuer: policy.issuer,
        reservedNames: policy.reservedNames,
        allowPrivateJwksUri: policy.allowPrivateJwksUri,
      },
    );
    settings = validateClientInput(input);
  } catch (error) {
    if (error instanceof OAuthError) throw new ClientMetadataDocumentError(error.description);
    if (error instanceof ValidationError) throw new ClientMetadataDocumentError(error.message);
    throw error;
  }
  return {
    ...settings,
    id,
    secretHash: null,
    registration: 'document',
    registrationAccessTokenHash: null,
    registrationScopes: null,
    firstGrantedAt: stored?.firstGrantedAt ?? null,
    documentExpiresAt: now + documentLifetime(maxAgeSeconds),
    createdAt: stored?.createdAt ?? now,
    updatedAt: now,
  };
}

/** Whether two versions of a document's client differ in anything but their times. */
function sameSettings(a: Client, b: Client): boolean {
  const strip = (client: Client) => ({ ...client, documentExpiresAt: 0, updatedAt: 0, createdAt: 0 });
  return JSON.stringify(strip(a)) === JSON.stringify(strip(b));
}

export interface ClientMetadataDocumentsOptions {
  storage: Pick<Storage, 'clients' | 'rateLimits' | 'atomically' | 'scopes' | 'auditEvents'>;
  clock: Clock;
  fetcher: ClientMetadataFetcher;
  policy: ClientMetadataDocumentPolicy;
  audit: AuditLog;
}

/**
 * Clients whose id is the URL of their Client ID Metadata Document (decision 46): looked up in the
 * store, where the last fetch left them, and fetched again once that has gone stale. One fetch per id
 * at a time in this process; the store shares the result with every other process.
 */
export class ClientMetadataDocuments {
  private readonly fetching = new Map<string, Promise<Client>>();

  constructor(private readonly options: ClientMetadataDocumentsOptions) {}

  get enabled(): boolean {
    return this.options.policy.enabled;
  }

  /**
   * The client `id` names: a stored client as it is, or, for a document's URL while documents are on,
   * the stored copy while it stands, else the document fetched now. Undefined when there is none;
   * ClientMetadataDocumentError when the document cannot be used, saying why.
   */
  async resolve(id: string): Promise<Client | undefined> {
    const { storage, clock, policy } = this.options;
    const stored = await storage.clients.get(id);
    if (stored !== undefined && stored.registration !== 'document') return stored;
    if (!policy.enabled || !isDocumentClientId(id)) return undefined;
    const url = new URL(id);
    const host = url.host;
    if (!hostAllowed(policy.hosts, url.hostname)) {
      throw new ClientMetadataDocumentError(`applications from ${host} are not accepted here`);
    }
    if (stored !== undefined && (stored.documentExpiresAt ?? 0) > clock.now()) return stored;
    const running = this.fetching.get(id);
    if (running !== undefined) return running;
    const fetched = this.fetch(id, host, stored).finally(() => this.fetching.delete(id));
    this.fetching.set(id, fetched);
    return fetched;
  }

  private async fetch(id: string, host: string, stored: Client | undefined): Promise<Client> {
    const { storage, clock, fetcher, policy } = this.options;
    const now = clock.now();
    const minute = Math.floor(now / 60);
    const [counted] = await storage.rateLimits.add([
      { key: `client-metadata:${host}:${minute}`, delta: 1, resetAt: (minute + 1) * 60 },
    ]);
    if ((counted?.count ?? 0) > DOCUMENT_FETCHES_PER_HOST_PER_MINUTE) {
      throw new ClientMetadataDocumentError(
        `too many documents fetched from ${host} this minute; try again soon`,
      );
    }
    let answer;
    try {
      answer = await fetcher.fetch(id);
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'the fetch failed';
      throw new ClientMetadataDocumentError(`the document at ${host} could not be fetched: ${reason}`);
    }
    let client: Client;
    try {
      client = clientFromDocument(id, answer.document, policy, now, answer.maxAgeSeconds, stored);
    } catch (error) {
      // The page says whose document it was: the host is the one fact the person can check.
      if (!(error instanceof ClientMetadataDocumentError)) throw error;
      throw new ClientMetadataDocumentError(`the document at ${host} was refused: ${error.message}`);
    }
    try {
      await this.store(client, now);
    } catch (error) {
      // Another process stored its fetch of the same document between this one's read and its insert
      // (PostgreSQL's READ COMMITTED lets both read "none"): theirs stands, as good as this one.
      const raced = await storage.clients.get(id);
      if (raced?.registration === 'document') return raced;
      throw error;
    }
    return client;
  }

  /** Writes a fetched document's client, and its audit event when it is new or changed, in one transaction. */
  private async store(client: Client, now: number): Promise<void> {
    const id = client.id;
    await this.options.audit.change(UNATTRIBUTED, async (tx, record) => {
      await registerScopesOf(tx, client.scopes, now);
      const current = await tx.clients.get(id);
      if (current === undefined) {
        await tx.clients.insert(client);
        await record({
          type: 'client.registered',
          clientId: id,
          after: viewClient(client),
          detail: 'registration document',
        });
      } else {
        const merged = { ...client, firstGrantedAt: current.firstGrantedAt, createdAt: current.createdAt };
        await tx.clients.update(merged, 'keep');
        if (!sameSettings(current, merged)) {
          await record({
            type: 'client.updated',
            clientId: id,
            before: viewClient(current),
            after: viewClient(merged),
            detail: 'registration document',
          });
        }
      }
    });
  }
}

/**
 * The client store the front doors (/authorize, /par, client authentication) look clients up in: the
 * stored clients, and documents' clients resolved as above. Every other reader uses the stored rows.
 */
export function withMetadataDocuments(clients: ClientStore, documents: ClientMetadataDocuments): ClientStore {
  return {
    insert: (client) => clients.insert(client),
    get: (id) => documents.resolve(id),
    list: (filter) => clients.list(filter),
    update: (client, secret) => clients.update(client, secret),
    delete: (id) => clients.delete(id),
    recordFirstGrant: (id, at) => clients.recordFirstGrant(id, at),
  };
}
