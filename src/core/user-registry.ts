import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { User } from './model.js';
import { hashPassword } from './passwords.js';
import type { Storage } from './ports.js';
import { ConflictError, ValidationError } from './validation.js';

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
