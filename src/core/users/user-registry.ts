import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { User } from '../model.js';
import { hashPassword } from './passwords.js';
import type { BrowserSessionStore, GrantStore, Storage } from '../ports.js';
import { AuditLog, UNATTRIBUTED, type AuditContext } from '../audit/audit-log.js';
import { ConflictError, NotFoundError, ValidationError } from '../validation.js';

export interface UserView {
  id: string;
  username: string;
  email: string | null;
  /** OpenID Connect Core §5.1: the user followed a link mailed to `email` (decision 35). */
  email_verified: boolean;
  name: string | null;
  /** An administrator (docs/decisions.md, decision 29). */
  admin: boolean;
  /** Disabled by an operator: no sign-in, no password grant (docs/decisions.md, decision 37). */
  disabled: boolean;
  created_at: string;
  updated_at: string;
}

export function viewUser(user: User): UserView {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    email_verified: user.emailVerified,
    name: user.name,
    admin: user.admin,
    disabled: user.disabled,
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

// RFC 5321 §4.5.3.1.1 and §4.5.3.1.3: a local part of at most 64 octets, a path of at most 256
// (254 for the address between its angle brackets).
export const EMAIL_MAX_LENGTH = 254;
const EMAIL_LOCAL_MAX_LENGTH = 64;
// RFC 5322 §3.4.1 addr-spec in its dot-atom form (§3.2.3 atext, RFC 6531 §3.3 adds non-ASCII
// characters), at a domain of dot-separated labels (RFC 1035 §2.3.1, letters and digits of any
// script, hyphens inside). Quoted local parts and address literals, which no mail form asks for,
// are refused: this is a plausibility check, not a delivery test.
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]|[^\\x00-\\x7f\\p{C}\\p{Z}]";
const LABEL = '[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]{0,61}[\\p{L}\\p{N}])?';
const EMAIL = new RegExp(`^(?:${ATEXT})+(?:\\.(?:${ATEXT})+)*@${LABEL}(?:\\.${LABEL})*$`, 'u');

/** A plausible e-mail address (see EMAIL), or null to have none; '' means none too. */
export function validateEmail(email: unknown): string | null {
  if (email === null || email === '') return null;
  if (
    typeof email !== 'string' ||
    email.length > EMAIL_MAX_LENGTH ||
    !EMAIL.test(email) ||
    Buffer.byteLength(email.slice(0, email.lastIndexOf('@'))) > EMAIL_LOCAL_MAX_LENGTH
  ) {
    throw new ValidationError(
      'email',
      `must be an e-mail address (name@domain) of at most ${EMAIL_MAX_LENGTH} characters`,
    );
  }
  return email;
}

export const NAME_MAX_LENGTH = 200;
// Printable characters without surrounding spaces; control and format characters (U+202E and its
// kind) could make a name shown to a relying party read as another (Unicode TR 36 §2.3).
const NAME = new RegExp(`^[^\\s\\p{C}](?:[^\\p{C}]{0,${NAME_MAX_LENGTH - 2}}[^\\s\\p{C}])?$`, 'u');

/** The user's full name (OpenID Connect Core §5.1 `name`), or null to have none; '' means none too. */
export function validateName(name: unknown): string | null {
  if (name === null || name === '') return null;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new ValidationError(
      'name',
      `must be 1 to ${NAME_MAX_LENGTH} printable characters without surrounding spaces`,
    );
  }
  return name;
}

/** An administrator or not (decision 29): true or false, nothing else. */
export function validateAdmin(admin: unknown): boolean {
  if (typeof admin !== 'boolean') throw new ValidationError('admin', 'must be true or false');
  return admin;
}

/** Disabled or not (decision 37): true or false, nothing else. */
export function validateDisabled(disabled: unknown): boolean {
  if (typeof disabled !== 'boolean') throw new ValidationError('disabled', 'must be true or false');
  return disabled;
}

/** What a user is created with; email, name and admin (false) are optional. */
export interface UserInput {
  username: unknown;
  password: unknown;
  email?: unknown;
  name?: unknown;
  admin?: unknown;
}

/** What an update may change; a field left out is kept, and email or name null (or '') removes it. */
export interface UserChanges {
  username?: unknown;
  password?: unknown;
  email?: unknown;
  name?: unknown;
  /** Gives (true) or takes away (false) the administrator role (decision 29). */
  admin?: unknown;
  /**
   * Disables (true) or enables (false) the user (decision 37). Disabling ends every browser session and
   * revokes every grant, as a new password does (endUserSignIns); enabling brings none of them back.
   */
  disabled?: unknown;
}

/** What the user registry reads and writes: each change in a transaction with its audit event. */
type UserStorage = Storage;

/** A unique-constraint violation, on SQLite or PostgreSQL: another writer took the name first. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

const noSuchUser = (idOrName: string) => new NotFoundError('user', `no such user: ${idOrName}`);

const nameTaken = (username: string) => new ConflictError('username', `user name already taken: ${username}`);

/**
 * Ends everything a user's old password may have opened: every browser session (signed-in pages)
 * and every standing grant, which retires its refresh tokens and makes the access tokens issued under
 * it fail validation at once. A password is reset because it may be known to someone else; a session
 * or token obtained with it must not outlive it (docs/decisions.md, decision 12; OWASP ASVS 3.3.3,
 * RFC 9700 §4.14.2). Revoking the grants also forgets remembered consents, so the user approves each
 * application again.
 */
async function endUserSignIns(
  storage: {
    readonly grants: Pick<GrantStore, 'listByUser' | 'revoke'>;
    readonly browserSessions: Pick<BrowserSessionStore, 'deleteByUser' | 'deleteOthersOfUser'>;
  },
  userId: string,
  at: number,
  keepSessionHash?: string,
): Promise<void> {
  if (keepSessionHash === undefined) await storage.browserSessions.deleteByUser(userId);
  else await storage.browserSessions.deleteOthersOfUser(userId, keepSessionHash);
  for (const grant of await storage.grants.listByUser(userId)) {
    if (grant.revokedAt === null) await storage.grants.revoke(grant.id, at);
  }
}

/** The user registry: what /v1/users, `gatehouse users` and `gatehouse grants` read and change. */
export class UserRegistry {
  constructor(
    private readonly storage: UserStorage,
    private readonly clock: Clock,
    /** Every change is recorded, in the change's own transaction (decision 41). */
    private readonly audit: AuditLog = new AuditLog(storage, clock),
  ) {}

  get(id: string): Promise<User | undefined> {
    return this.storage.users.get(id);
  }

  getByUsername(username: string): Promise<User | undefined> {
    return this.storage.users.getByUsername(username);
  }

  /** The user with this id, or a NotFoundError. */
  async require(id: string): Promise<User> {
    const user = await this.storage.users.get(id);
    if (user === undefined) throw noSuchUser(id);
    return user;
  }

  /** The user with this user name, or a NotFoundError. */
  async requireByUsername(username: string): Promise<User> {
    const user = await this.storage.users.getByUsername(username);
    if (user === undefined) throw noSuchUser(username);
    return user;
  }

  /** The user an operator names by id or, failing that, by user name. */
  async find(idOrName: string): Promise<User | undefined> {
    return (await this.storage.users.get(idOrName)) ?? (await this.storage.users.getByUsername(idOrName));
  }

  list(limit: number, offset: number): Promise<{ items: User[]; total: number }> {
    return this.storage.users.list(limit, offset);
  }

  /** A new user; a user name in use is a ConflictError. */
  async create(input: UserInput, context: AuditContext = UNATTRIBUTED): Promise<User> {
    const username = validateUsername(input.username);
    const password = validatePassword(input.password);
    const email = input.email === undefined ? null : validateEmail(input.email);
    const name = input.name === undefined ? null : validateName(input.name);
    const admin = input.admin === undefined ? false : validateAdmin(input.admin);
    const now = this.clock.now();
    const user: User = {
      id: randomUUID(),
      username,
      passwordHash: await hashPassword(password),
      email,
      // Decision 35: an address is verified only by its owner following a mailed link.
      emailVerified: false,
      name,
      admin,
      disabled: false,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.audit.change(context, async (storage, record) => {
        if (!(await storage.users.insert(user))) throw nameTaken(username);
        await record({ type: 'user.created', userId: user.id, after: viewUser(user) });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(username);
      throw error;
    }
    return user;
  }

  /**
   * Renames a user, changes their e-mail address or full name or administrator role (decision 29),
   * disables or enables them (decision 37), and/or sets a new password (hashed; the
   * plain text is never stored): the one rule for PUT and PATCH /v1/users/{id} and `gatehouse users
   * update` / `set-password`. A new password ends the user's browser sessions and grants
   * (endUserSignIns): whoever knew the old one must not stay signed in.
   */
  async update(user: User, changes: UserChanges, context: AuditContext = UNATTRIBUTED): Promise<User> {
    const username = changes.username === undefined ? user.username : validateUsername(changes.username);
    const password = changes.password === undefined ? undefined : validatePassword(changes.password);
    const email = changes.email === undefined ? user.email : validateEmail(changes.email);
    const name = changes.name === undefined ? user.name : validateName(changes.name);
    const admin = changes.admin === undefined ? user.admin : validateAdmin(changes.admin);
    const disabled = changes.disabled === undefined ? user.disabled : validateDisabled(changes.disabled);
    if (username !== user.username) {
      const holder = await this.storage.users.getByUsername(username);
      if (holder !== undefined && holder.id !== user.id) throw nameTaken(username);
    }
    const now = this.clock.now();
    const updated: User = {
      ...user,
      username,
      passwordHash: password === undefined ? user.passwordHash : await hashPassword(password),
      email,
      // What the store keeps (UserStore.update): verified only while the address stays (decision 35).
      emailVerified: email === user.email && user.emailVerified,
      name,
      admin,
      disabled,
      // Also UserInfo's updated_at (OpenID Connect Core §5.1).
      updatedAt: now,
    };
    const [before, after] = [viewUser(user), viewUser(updated)];
    try {
      await this.audit.change(context, async (storage, record) => {
        if (!(await storage.users.update(updated))) throw noSuchUser(user.id);
        // Decision 37: a disabled user keeps nothing they had opened. Ended on every `disabled: true`, not
        // only when it changes: an operator repeating it also ends a sign-in that raced the first.
        if (password !== undefined || changes.disabled === true) {
          await endUserSignIns(storage, user.id, now);
        }
        // The password itself is never in an event: only that an operator set a new one.
        if (password !== undefined) await record({ type: 'password.reset', userId: user.id });
        if (JSON.stringify({ ...before, updated_at: '' }) !== JSON.stringify({ ...after, updated_at: '' })) {
          await record({
            type: 'user.updated',
            userId: user.id,
            before,
            after,
            ...(disabled !== user.disabled ? { detail: disabled ? 'disabled' : 'enabled' } : {}),
          });
        }
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(username);
      throw error;
    }
    return updated;
  }

  /**
   * The user's own change of password on the security page (decision 37): as a new password set by an
   * operator (decision 12), every other browser session ends and every grant is revoked, but the
   * session `keepSessionHash` (the browser making the change, which just proved the current password)
   * stays signed in.
   */
  async changeOwnPassword(
    user: User,
    password: string,
    keepSessionHash: string,
    address: string | null = null,
  ): Promise<User> {
    const now = this.clock.now();
    const updated: User = {
      ...user,
      passwordHash: await hashPassword(validatePassword(password)),
      updatedAt: now,
    };
    await this.audit.change({ actor: { type: 'user', id: user.id }, address }, async (storage, record) => {
      if (!(await storage.users.update(updated))) throw noSuchUser(user.id);
      await endUserSignIns(storage, user.id, now, keepSessionHash);
      await record({ type: 'password.changed', userId: user.id });
    });
    return updated;
  }

  /** Deletes the user; their grants go with them (and so every token issued for them). False when unknown. */
  delete(id: string, context: AuditContext = UNATTRIBUTED): Promise<boolean> {
    return this.audit.change(context, async (storage, record) => {
      const user = await storage.users.get(id);
      if (user === undefined || !(await storage.users.delete(id))) return false;
      await record({ type: 'user.deleted', userId: id, before: viewUser(user) });
      return true;
    });
  }
}
