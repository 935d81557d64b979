import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { User } from './model.js';
import { hashPassword } from './passwords.js';
import type { Storage } from './ports.js';
import { ConflictError, NotFoundError, ValidationError } from './validation.js';

export interface UserView {
  id: string;
  username: string;
  created_at: string;
  updated_at: string;
}

export function viewUser(user: User): UserView {
  return {
    id: user.id,
    username: user.username,
    created_at: new Date(user.createdAt * 1000).toISOString(),
    updated_at: new Date(user.updatedAt * 1000).toISOString(),
  };
}

// Printable characters, no spaces at the ends; long enough for e-mail addresses.
const USERNAME = /^[^\s\p{C}](?:[^\p{C}]{0,126}[^\s\p{C}])?$/u;

export function validateUsername(username: unknown): string {
  if (typeof username !== 'string' || !USERNAME.test(username)) {
    throw new ValidationError('username', 'must be 1 to 128 printable characters without surrounding spaces');
  }
  return username;
}

export function validatePassword(password: unknown): string {
  // The upper bound keeps hashing cost bounded; the lower one refuses trivially guessable passwords.
  if (typeof password !== 'string' || password.length < 8 || password.length > 1024) {
    throw new ValidationError('password', 'must be 8 to 1024 characters');
  }
  return password;
}

export async function createUser(
  storage: Storage,
  clock: Clock,
  input: { username: unknown; password: unknown },
): Promise<User> {
  const username = validateUsername(input.username);
  const password = validatePassword(input.password);
  const now = clock.now();
  const user: User = {
    id: randomUUID(),
    username,
    passwordHash: await hashPassword(password),
    createdAt: now,
    updatedAt: now,
  };
  if (!(await storage.users.insert(user))) {
    throw new ConflictError('username', `user name already taken: ${username}`);
  }
  return user;
}

/**
 * Ends everything a user's old password may have opened: every browser session (signed-in pages)
 * and every standing grant, which retires its refresh tokens and makes the access tokens issued under
 * it fail validation at once. A password is reset because it may be known to someone else; a session
 * or token obtained with it must not outlive it (OWASP ASVS 3.3.3, RFC 9700 §4.14.2). Revoking the
 * grants also forgets remembered consents, so the user approves each application again.
 */
export async function endUserSignIns(storage: Storage, userId: string, at: number): Promise<void> {
  await storage.browserSessions.deleteByUser(userId);
  for (const grant of await storage.grants.listByUser(userId)) {
    if (grant.revokedAt === null) await storage.grants.revoke(grant.id, at);
  }
}

/**
 * Sets a user's password (hashed; the plain text is never stored) and ends their sessions and
 * grants (endUserSignIns). The one rule for every way of resetting a password: PATCH and PUT
 * /v1/users/{id}, and the command line. Undefined when there is no such user; ValidationError for a
 * password outside the accepted length.
 */
export async function changePassword(
  storage: Storage,
  clock: Clock,
  userId: string,
  password: unknown,
): Promise<User | undefined> {
  const valid = validatePassword(password);
  const user = await storage.users.get(userId);
  if (user === undefined) return undefined;
  const now = clock.now();
  const updated: User = { ...user, passwordHash: await hashPassword(valid), updatedAt: now };
  if (!(await storage.users.update(updated))) return undefined;
  await endUserSignIns(storage, userId, now);
  return updated;
}

/** A unique-constraint violation, on SQLite or PostgreSQL: another writer took the name first. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * Renames a user and/or sets a new password. A new password ends the user's browser sessions and
 * grants (endUserSignIns): whoever knew the old one must not stay signed in.
 */
export async function updateUser(
  storage: Storage,
  clock: Clock,
  user: User,
  changes: { username?: unknown; password?: unknown },
): Promise<User> {
  const username = changes.username === undefined ? user.username : validateUsername(changes.username);
  const password = changes.password === undefined ? undefined : validatePassword(changes.password);
  if (username !== user.username) {
    const holder = await storage.users.getByUsername(username);
    if (holder !== undefined && holder.id !== user.id) {
      throw new ConflictError('username', `user name already taken: ${username}`);
    }
  }
  const now = clock.now();
  const updated: User = {
    ...user,
    username,
    passwordHash: password === undefined ? user.passwordHash : await hashPassword(password),
    updatedAt: now,
  };
  try {
    if (!(await storage.users.update(updated))) throw new NotFoundError('user', 'no such user');
  } catch (error) {
    if (isUniqueViolation(error)) throw new ConflictError('username', `user name already taken: ${username}`);
    throw error;
  }
  if (password !== undefined) await endUserSignIns(storage, user.id, now);
  return updated;
}
