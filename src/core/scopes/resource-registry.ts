import type { Clock } from '../../shared/clock.js';
import { registerScopesOf } from './scope-registry.js';
import type { ResourceServer } from '../model.js';
import type { SearchPage, Storage } from '../ports.js';
import { AuditLog, UNATTRIBUTED, type AuditContext } from '../audit/audit-log.js';
import { canonicalResourceUri, ResourceTargets } from './resources.js';
import { isValidScopeName } from './scopes.js';
import { ConflictError, NotFoundError, ValidationError } from '../validation.js';

/** The fields an operator sets on a resource server: the same on the command line and in /v1/resources. */
export interface ResourceInput {
  uri: string;
  /** What operators call it; none by default. */
  name?: string | null;
  /** The scopes it offers; none (the default) means any scope a client has. */
  scopes?: string[];
}

/** A resource server as operators see it (CLI --json, /v1/resources). */
export interface ResourceView {
  uri: string;
  name: string | null;
  scopes: string[];
  created_at: string;
}

export function viewResource(resource: ResourceServer): ResourceView {
  return {
    uri: resource.uri,
    name: resource.name,
    scopes: resource.scopes,
    created_at: new Date(resource.createdAt * 1000).toISOString(),
  };
}

export const RESOURCE_NAME_MAX_LENGTH = 200;
export const RESOURCE_SCOPES_MAX = 100;
// Control and bidirectional formatting characters, as in client names (client-registry.ts).
const CONTROL_CHARACTERS = /[\p{Cc}\p{Cs}\p{Co}\p{Zl}\p{Zp}]|(?![\u200c\u200d])\p{Cf}/u;

function validName(name: string | null | undefined): string | null {
  if (name === undefined || name === null) return null;
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > RESOURCE_NAME_MAX_LENGTH) {
    throw new ValidationError('name', `must be 1 to ${RESOURCE_NAME_MAX_LENGTH} characters`);
  }
  if (CONTROL_CHARACTERS.test(trimmed)) {
    throw new ValidationError('name', 'must not contain control or bidirectional formatting characters');
  }
  return trimmed;
}

function validScopes(scopes: readonly string[] | undefined): string[] {
  const unique = [...new Set(scopes ?? [])];
  if (unique.length > RESOURCE_SCOPES_MAX) {
    throw new ValidationError('scopes', `at most ${RESOURCE_SCOPES_MAX} scopes`);
  }
  for (const scope of unique) {
    if (!isValidScopeName(scope)) throw new ValidationError('scopes', `malformed scope name "${scope}"`);
  }
  return unique;
}

type ResourceStorage = Storage;

const noSuchResource = (uri: string) => new NotFoundError('uri', `no resource with URI ${uri}`);

/**
 * The resource registry (RFC 8707): what `gatehouse resources` and /v1/resources read and change.
 * URIs are kept in canonical form (canonicalResourceUri), so `https://api.example/` finds the resource
 * registered as `https://api.example`. A scope first named here is registered as `clients create
 * --scopes` registers it. Deleting a resource refuses it in new requests at once; access tokens already
 * issued for it stay valid until they expire.
 */
export class ResourceRegistry {
  constructor(
    private readonly storage: ResourceStorage,
    private readonly clock: Clock,
    private readonly targets: ResourceTargets,
    /** Every change is recorded, in the change's own transaction (decision 41). */
    private readonly audit: AuditLog = new AuditLog(storage, clock),
  ) {}

  /** The canonical form of an operator's URI, or a ValidationError naming the field. */
  private canonical(uri: string): string {
    const canonical = typeof uri === 'string' ? canonicalResourceUri(uri) : { problem: 'is required' };
    if (canonical.uri === undefined) throw new ValidationError('uri', `${String(uri)} ${canonical.problem}`);
    return canonical.uri;
  }

  list(): Promise<ResourceServer[]> {
    return this.storage.resources.list();
  }

  /** A page of the resources by URI, searched by a part of the URI or name (an operator's list). */
  page(filter: SearchPage): Promise<{ items: ResourceServer[]; total: number }> {
    return this.storage.resources.page(filter);
  }

  /** The resource a URI names (in any spelling of it), or undefined. */
  async get(uri: string): Promise<ResourceServer | undefined> {
    const canonical = canonicalResourceUri(uri).uri;
    return canonical === undefined ? undefined : this.storage.resources.get(canonical);
  }

  /** The resource, or a NotFoundError. */
  async require(uri: string): Promise<ResourceServer> {
    const resource = await this.get(uri);
    if (resource === undefined) throw noSuchResource(uri);
    return resource;
  }

  /** Registers a resource server; a URI already registered, or the issuer's own, is a ConflictError. */
  async create(input: ResourceInput, context: AuditContext = UNATTRIBUTED): Promise<ResourceServer> {
    const uri = this.canonical(input.uri);
    if (this.targets.isIssuer(uri)) {
      throw new ConflictError(
        'uri',
        'the issuer (and its /v1) is always a resource (Gatehouse’s own API); it is not registered',
      );
    }
    const now = this.clock.now();
    const resource: ResourceServer = {
      uri,
      name: validName(input.name),
      scopes: validScopes(input.scopes),
      createdAt: now,
    };
    await this.audit.change(context, async (storage, record) => {
      await registerScopesOf(storage, resource.scopes, now);
      if (!(await storage.resources.insert(resource))) {
        throw new ConflictError('uri', 'a resource with this URI is registered');
      }
      await record({ type: 'resource.created', after: viewResource(resource) });
    });
    return resource;
  }

  /** Replaces name and scopes (PUT): a field left out takes its default, as at creation. */
  async replace(
    resource: ResourceServer,
    input: Omit<ResourceInput, 'uri'>,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<ResourceServer> {
    const updated: ResourceServer = {
      ...resource,
      name: validName(input.name),
      scopes: validScopes(input.scopes),
    };
    await this.audit.change(context, async (storage, record) => {
      await registerScopesOf(storage, updated.scopes, this.clock.now());
      if (!(await storage.resources.update(updated))) throw noSuchResource(resource.uri);
      await record({
        type: 'resource.updated',
        before: viewResource(resource),
        after: viewResource(updated),
      });
    });
    return updated;
  }

  /** Changes the fields given and keeps the others (PATCH). */
  update(
    resource: ResourceServer,
    changes: Omit<ResourceInput, 'uri'>,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<ResourceServer> {
    return this.replace(
      resource,
      {
        name: changes.name === undefined ? resource.name : changes.name,
        scopes: changes.scopes ?? resource.scopes,
      },
      context,
    );
  }

  /** Deletes the resource (in any spelling of its URI); a NotFoundError when none has it. */
  async delete(uri: string, context: AuditContext = UNATTRIBUTED): Promise<void> {
    const canonical = canonicalResourceUri(uri).uri;
    if (canonical === undefined) throw noSuchResource(uri);
    await this.audit.change(context, async (storage, record) => {
      const existing = await storage.resources.get(canonical);
      if (existing === undefined || !(await storage.resources.delete(canonical))) throw noSuchResource(uri);
      await record({ type: 'resource.deleted', before: viewResource(existing) });
    });
  }
}
