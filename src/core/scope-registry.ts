import type { Clock } from '../shared/clock.js';
import type { Storage } from './ports.js';
import { isValidScopeName } from './scopes.js';
import { ConflictError, NotFoundError, ValidationError } from './validation.js';

/**
 * Scopes Gatehouse itself depends on: /v1 is guarded by `admin`, and `profile` is re-registered at every
 * start. Deleting one would lock callers out, or look done while it is not; the same rule holds on the
 * command line and in the API.
 */
export const PROTECTED_SCOPES: readonly string[] = ['profile', 'admin'];

export function isProtectedScope(name: string): boolean {
  return PROTECTED_SCOPES.includes(name);
}

/** Deletes a scope; a built-in one is refused (ConflictError), an unknown one is a NotFoundError. */
export async function deleteScope(storage: Storage, name: string): Promise<void> {
  if (isProtectedScope(name)) throw new ConflictError('name', `built-in scope ${name} cannot be deleted`);
  if (!(await storage.scopes.delete(name))) throw new NotFoundError('name', `no scope named ${name}`);
}

/** Registers a scope or changes its description. */
export async function describeScope(
  storage: Storage,
  clock: Clock,
  name: string,
  description: string | undefined,
): Promise<{ name: string; description: string }> {
  if (!isValidScopeName(name)) throw new ValidationError('name', 'not a valid scope name');
  const existing = await storage.scopes.get(name);
  const scope = {
    name,
    description: description ?? existing?.description ?? name,
    createdAt: existing?.createdAt ?? clock.now(),
  };
  await storage.scopes.upsert(scope);
  return { name: scope.name, description: scope.description };
}
