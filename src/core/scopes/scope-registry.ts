import type { Clock } from '../../shared/clock.js';
import type { Scope } from '../model.js';
import type { ScopeStore, SearchPage, Storage } from '../ports.js';
import { isoTime } from '../../shared/clock.js';
import { AuditLog, UNATTRIBUTED, type AuditContext } from '../audit/audit-log.js';
import { isValidScopeName } from './scopes.js';
import { ConflictError, NotFoundError, ValidationError } from '../validation.js';

/** The scopes every store has: registered at every start (and by `gatehouse init`). */
export const BUILT_IN_SCOPES: ReadonlyArray<Omit<Scope, 'createdAt'>> = [
  { name: 'profile', description: 'See your user name and account details' },
  { name: 'admin', description: 'Manage Gatehouse: clients, users, grants and keys' },
  // OpenID Connect Core §3.1.2.1, §5.4 and §11: the scope values the provider gives meaning to.
  { name: 'openid', description: 'Sign you in with your Gatehouse account' },
  { name: 'email', description: 'Your email address' },
  { name: 'offline_access', description: 'Keep access while you are away' },
];

/**
 * Descriptions a built-in scope had by default before: a store that still holds one is given today's
 * at start (ScopeRegistry.ensureBuiltIns), since nobody chose it; a description an operator wrote
 * stays. `offline_access` is listed on the consent page in the words of docs/decisions.md, decision 17.
 */
const FORMER_DEFAULTS: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'offline_access', description: 'Keep access while you are signed out' },
];

/**
 * Scopes Gatehouse itself depends on: /v1 is guarded by `admin`, OpenID Connect gives `openid`,
 * `email` and `offline_access` their meaning, and each is re-registered at every start. Deleting one would lock callers out, or look done while it is not; the same rule holds on the
 * command line and in the API.
 */
export const PROTECTED_SCOPES: readonly string[] = BUILT_IN_SCOPES.map((scope) => scope.name);

export function isProtectedScope(name: string): boolean {
  return PROTECTED_SCOPES.includes(name);
}

type ScopeStorage = { readonly scopes: ScopeStore };

/** Registers the scopes a client or resource server names that the store does not know yet. */
export async function registerScopesOf(storage: ScopeStorage, scopes: string[], now: number): Promise<void> {
  // A scope first named by a client gets a readable description until an operator writes one.
  await storage.scopes.ensure(
    scopes.map((name) => ({ name, description: `Access “${name}”`, createdAt: now })),
  );
}

/** A scope as /v1 and its audit events show it. */
export function viewScope(scope: Scope): { name: string; description: string; created_at: string } {
  return { name: scope.name, description: scope.description, created_at: isoTime(scope.createdAt) };
}

/** The scope registry: what the consent page, /v1/scopes and `gatehouse scopes` read and change. */
export class ScopeRegistry {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    /** Every change is recorded, in the change's own transaction (decision 41). */
    private readonly audit: AuditLog = new AuditLog(storage, clock),
  ) {}

  list(): Promise<Scope[]> {
    return this.storage.scopes.list();
  }

  /** A page of the scopes by name, searched by a part of the name (an operator's list). */
  page(filter: SearchPage): Promise<{ items: Scope[]; total: number }> {
    return this.storage.scopes.page(filter);
  }

  get(name: string): Promise<Scope | undefined> {
    return this.storage.scopes.get(name);
  }

  /** The scope, or a NotFoundError. */
  async require(name: string): Promise<Scope> {
    const scope = await this.storage.scopes.get(name);
    if (scope === undefined) throw new NotFoundError('name', `no scope named ${name}`);
    return scope;
  }

  /** Registers a new scope; a name in use is a ConflictError. Without a description, the name stands. */
  async create(
    name: string,
    description: string | undefined,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<Scope> {
    if (!isValidScopeName(name)) throw new ValidationError('name', 'not a valid scope name');
    if ((await this.storage.scopes.get(name)) !== undefined) {
      throw new ConflictError('name', 'a scope with this name exists');
    }
    const scope: Scope = { name, description: description ?? name, createdAt: this.clock.now() };
    await this.audit.change(context, async (storage, record) => {
      await storage.scopes.upsert(scope);
      await record({ type: 'scope.created', after: viewScope(scope) });
    });
    return scope;
  }

  /** Registers a scope or changes its description; without one, an existing description is kept. */
  async describe(
    name: string,
    description: string | undefined,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<Scope> {
    if (!isValidScopeName(name)) throw new ValidationError('name', 'not a valid scope name');
    const existing = await this.storage.scopes.get(name);
    const scope: Scope = {
      name,
      description: description ?? existing?.description ?? name,
      createdAt: existing?.createdAt ?? this.clock.now(),
    };
    await this.audit.change(context, async (storage, record) => {
      await storage.scopes.upsert(scope);
      await record({
        type: existing === undefined ? 'scope.created' : 'scope.updated',
        before: existing === undefined ? null : viewScope(existing),
        after: viewScope(scope),
      });
    });
    return scope;
  }

  /** Deletes a scope; a built-in one is refused (ConflictError), an unknown one is a NotFoundError. */
  async delete(name: string, context: AuditContext = UNATTRIBUTED): Promise<void> {
    if (isProtectedScope(name)) throw new ConflictError('name', `built-in scope ${name} cannot be deleted`);
    await this.audit.change(context, async (storage, record) => {
      const existing = await storage.scopes.get(name);
      if (existing === undefined || !(await storage.scopes.delete(name))) {
        throw new NotFoundError('name', `no scope named ${name}`);
      }
      await record({ type: 'scope.deleted', before: viewScope(existing) });
    });
  }

  /**
   * Adds the built-in scopes a store lacks; descriptions an operator changed are kept, and a former
   * default (FORMER_DEFAULTS) becomes today's.
   */
  async ensureBuiltIns(): Promise<void> {
    const now = this.clock.now();
    await this.storage.scopes.ensure(BUILT_IN_SCOPES.map((scope) => ({ ...scope, createdAt: now })));
    for (const former of FORMER_DEFAULTS) {
      const stored = await this.storage.scopes.get(former.name);
      const today = BUILT_IN_SCOPES.find((scope) => scope.name === former.name);
      if (stored?.description === former.description && today !== undefined) {
        await this.storage.scopes.upsert({ ...stored, description: today.description });
      }
    }
  }
}
