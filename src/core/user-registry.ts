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

/** A unique-constraint violation, on SQLite or PostgreSQL: another writer took the name first. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * Ends what a user's old password opened: every browser session and every refresh token (the grants,
 * the consents, stay). Access tokens already issued run out within their lifetime. Returns the counts.
 */
export async function endSessionsOfUser(
  storage: Storage,
  clock: Clock,
  userId: string,
): Promise<{ sessions: number; refreshTokens: number }> {
  const sessions = await storage.browserSessions.deleteAllOfUser(userId);
  const refreshTokens = await storage.refreshTokens.retireAllOfUser(userId, clock.now());
  return { sessions, refreshTokens };
}

/**
 * Renames a user and/or sets a new password. A new password ends the user's browser sessions and
 * refresh tokens (endSessionsOfUser): whoever knew the old one must not stay signed in.
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
  const updated: User = {
    ...user,
    username,
    passwordHash: password === undefined ? user.passwordHash : await hashPassword(password),
    updatedAt: clock.now(),
  };
  try {
    if (!(await storage.users.update(updated))) throw new NotFoundError('user', 'no such user');
  } catch (error) {
    if (isUniqueViolation(error)) throw new ConflictError('username', `user name already taken: ${username}`);
    throw error;
  }
  if (password !== undefined) await endSessionsOfUser(storage, clock, user.id);
  return updated;
}
