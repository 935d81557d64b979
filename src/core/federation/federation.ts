import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import { randomToken, sha256 } from '../../shared/crypto.js';
import type { FederatedLink, IdentityProvider, SessionAuthentication, User } from '../model.js';
import type { Storage } from '../ports.js';
import { validateEmail, validateName, validateUsername } from '../users/user-registry.js';
import { ValidationError } from '../validation.js';
import type { Authenticator, AuthenticatorResult } from '../sign-in/authenticator.js';
import { FEDERATED } from '../sign-in/methods.js';
import type { SignInResult, SignInService } from '../sign-in/sign-in-service.js';
import {
  UpstreamError,
  type UpstreamAuthorization,
  type UpstreamIdentity,
  type UpstreamProviders,
  type UpstreamRequest,
} from './upstream.js';

/** How many local users one upstream address or name is compared with (addresses are not unique). */
export const CANDIDATES_PER_IDENTITY = 5;
/** The namespace of used upstream `state` values in the shared UsedJtiStore (decision 40). */
export const UPSTREAM_STATE_NAMESPACE = 'upstream-state';
/** At most this many providers are offered on the sign-in page (they are listed whole). */
export const MAX_PROVIDERS = 100;

/**
 * An upstream person who may be a local user already (decision 40, case d): the same address, or the
 * same user name. Nothing is linked and nobody created until the person proves they are one of
 * `candidates` (a password or a passkey); then the link is made.
 */
export interface PendingLink {
  providerId: string;
  issuer: string;
  subject: string;
  /** What names the upstream account to the person: its user name, or its address. */
  label: string | null;
  /** The local users it may be (ids), oldest first. */
  candidates: string[];
  /** What they share with the upstream person: an address, or (only) the user name. */
  reason: 'email' | 'username';
}

/** What a federated sign-in came to (decision 40). */
export type FederatedSignIn =
  | (Extract<SignInResult, { outcome: 'signed-in' }> & {
      /** `link`: an existing link; `verified-email`: linked now by the provider's verified address; `created`: a new user. */
      via: 'link' | 'verified-email' | 'created';
    })
  /** A local user may be this person: they sign in to it first, and the link is made then. */
  | { outcome: 'link-required'; pending: PendingLink }
  | Exclude<SignInResult, { outcome: 'signed-in' }>;

/** What linking an upstream account to the signed-in user came to (the security page's "Link NAME"). */
export type LinkResult =
  | { outcome: 'linked'; link: FederatedLink }
  /** Linked to this user already: nothing changed. */
  | { outcome: 'already-linked' }
  /** That upstream account signs another user in: never moved from one user to another. */
  | { outcome: 'linked-to-another' };

/** What removing a link came to. */
export type UnlinkResult = 'removed' | 'not-found' | 'last-way-in';

/** A federated sign-in's user, found before anything is checked (the attempt SignInService runs). */
type Resolution =
  /** An existing user: by its link (`link`), or to be linked now (`newLink`, by a verified address). */
  | { kind: 'user'; user: User; link?: FederatedLink; newLink?: FederatedLink }
  /** A new user from the upstream claims, and its link. */
  | { kind: 'create'; draft: User; newLink: FederatedLink };

export interface FederationDependencies {
  storage: Pick<Storage, 'identityProviders' | 'federatedLinks' | 'users' | 'usedJtis' | 'passkeys'>;
  clock: Clock;
  signIns: SignInService;
  upstream: UpstreamProviders;
  /** The redirect URI registered at the upstream for a provider: `<issuer>/sign-in/callback/<id>`. */
  redirectUri: (providerId: string) => string;
}

/** The user name a label or address may give, valid here; undefined when it gives none. */
function usableUsername(value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  try {
    return validateUsername(value.trim());
  } catch (error) {
    if (error instanceof ValidationError) return undefined;
    throw error;
  }
}

function orNull<T>(read: () => T | null): T | null {
  try {
    return read();
  } catch (error) {
    if (error instanceof ValidationError) return null;
    throw error;
  }
}

/** ASCII case only, as UserStore.listByEmail compares addresses. */
const sameAddress = (a: string, b: string) =>
  a.replace(/[A-Z]/g, (c) => c.toLowerCase()) === b.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * Sign-in through upstream identity providers (docs/decisions.md, decision 40): the upstream flow's
 * start and end (through the UpstreamProviders port), and the linking rules that say which local user
 * an upstream person is:
 *
 * (a) a link (issuer, subject) exists: that user;
 * (b) a signed-in user links an upstream account from the security page (link(), not signIn());
 * (c) the provider links by verified address, the upstream says the address is verified, and exactly
 *     one local user has it verified too: linked to that user;
 * (d) otherwise a local user with that address (verified or not), or with the upstream user name:
 *     nothing is created or linked until the person signs in to that user (link-required);
 * (e) otherwise a new user, with no password, from the upstream claims.
 *
 * Every sign-in still runs through SignInService.attempt with the `federated` method, so a disabled
 * user is refused and the lockout of (user name, source) applies as to every method (decision 30).
 */
export class Federation {
  private readonly authenticator: Authenticator<Resolution>;

  constructor(private readonly deps: FederationDependencies) {
    this.authenticator = {
      method: FEDERATED,
      claimant: async (resolution) =>
        resolution.kind === 'user' ? resolution.user.username : resolution.draft.username,
      verify: (resolution) => this.complete(resolution),
    };
  }

  /** A provider by id; undefined when there is none. */
  provider(id: string): Promise<IdentityProvider | undefined> {
    return this.deps.storage.identityProviders.get(id);
  }

  /** Every provider, in name order (the sign-in page's buttons, before a client's choice). */
  async providers(): Promise<IdentityProvider[]> {
    return (await this.deps.storage.identityProviders.list(MAX_PROVIDERS, 0)).items;
  }

  redirectUri(provider: Pick<IdentityProvider, 'id'>): string {
    return this.deps.redirectUri(provider.id);
  }

  /**
   * Starts the upstream flow: the URL to send the browser to, and the state, nonce and verifier its
   * callback must match. A provider's required `acr` is asked for first (OpenID Connect Core §3.1.2.1
   * acr_values), ahead of what the authorization request asked (step-up passes through).
   */
  begin(provider: IdentityProvider, request: UpstreamRequest = {}): Promise<UpstreamAuthorization> {
    const acrValues = [
      ...(provider.requiredAcr !== null ? [provider.requiredAcr] : []),
      ...(request.acrValues ?? []).filter((value) => value !== provider.requiredAcr),
    ];
    return this.deps.upstream.begin(provider, this.redirectUri(provider), {
      ...request,
      ...(acrValues.length > 0 ? { acrValues } : {}),
    });
  }

  /**
   * Marks an upstream `state` used, once across every process sharing the store (UsedJtiStore): a
   * callback replayed, here or in another process, is refused. True the first time.
   */
  spendState(state: string, expiresAt: number): Promise<boolean> {
    return this.deps.storage.usedJtis.use(
      UPSTREAM_STATE_NAMESPACE,
      sha256(state),
      expiresAt,
      this.deps.clock.now(),
    );
  }

  /**
   * Checks the callback through the port (state, RFC 9207 iss, the ID token, userinfo) and the
   * provider's required `acr`: an answer without it is refused (`acr-not-delivered`), whatever else
   * it proves. Throws UpstreamError.
   */
  async finish(
    provider: IdentityProvider,
    callbackUrl: URL,
    expected: Omit<UpstreamAuthorization, 'url'>,
  ): Promise<UpstreamIdentity> {
    const identity = await this.deps.upstream.finish(
      provider,
      this.redirectUri(provider),
      callbackUrl,
      expected,
    );
    if (provider.requiredAcr !== null && identity.acr !== provider.requiredAcr) {
      throw new UpstreamError('invalid-response', 'acr-not-delivered');
    }
    return identity;
  }

  /**
   * The sign-in of an upstream person (rules a, c, d, e): who they are here, signed in through
   * SignInService. `authentication` records the provider, and what the upstream said of its own
   * sign-in only when the provider is trusted for it.
   */
  async signIn(
    provider: IdentityProvider,
    identity: UpstreamIdentity,
    address: string,
  ): Promise<FederatedSignIn> {
    const resolution = await this.resolve(provider, identity);
    if ('candidates' in resolution) return { outcome: 'link-required', pending: resolution };
    const result = await this.deps.signIns.attempt(this.authenticator, resolution, { address });
    if (result.outcome !== 'signed-in') return result;
    const via = resolution.kind === 'create' ? 'created' : resolution.newLink ? 'verified-email' : 'link';
    return {
      ...result,
      authentication: federatedAuthentication(result.authentication, provider, identity),
      via,
    };
  }

  /**
   * A signed-in user proving who they are again through a provider (`reauth=1`): only an upstream
   * account linked to that same user will do; anything else is `wrong-credentials`.
   */
  async reauthenticate(
    provider: IdentityProvider,
    identity: UpstreamIdentity,
    user: User,
    address: string,
  ): Promise<SignInResult> {
    const link = await this.deps.storage.federatedLinks.find(identity.issuer, identity.subject);
    if (link === undefined || link.userId !== user.id) return { outcome: 'wrong-credentials' };
    const result = await this.deps.signIns.attempt(
      this.authenticator,
      { kind: 'user', user, link },
      { address },
    );
    if (result.outcome !== 'signed-in') return result;
    return { ...result, authentication: federatedAuthentication(result.authentication, provider, identity) };
  }

  /**
   * Links an upstream account to `user` (rule b: the signed-in user's own choice on the security
   * page, after a recent sign-in). A link already held by another user is never moved.
   */
  async link(provider: IdentityProvider, identity: UpstreamIdentity, user: User): Promise<LinkResult> {
    const links = this.deps.storage.federatedLinks;
    const held = await links.find(identity.issuer, identity.subject);
    if (held !== undefined) {
      return held.userId === user.id ? { outcome: 'already-linked' } : { outcome: 'linked-to-another' };
    }
    const link = this.newLink(provider, identity, user.id);
    if (await links.insert(link)) return { outcome: 'linked', link };
    // Linked meanwhile, by this user in another tab or to someone else.
    const now = await links.find(identity.issuer, identity.subject);
    return now?.userId === user.id ? { outcome: 'already-linked' } : { outcome: 'linked-to-another' };
  }

  /**
   * Ends a pending link (rule d) once the person signed in as `userId` with a password or a passkey:
   * linked when `userId` is one of its candidates and the upstream account is linked to nobody yet.
   */
  async completePendingLink(pending: PendingLink, userId: string): Promise<LinkResult | undefined> {
    if (!pending.candidates.includes(userId)) return undefined;
    const [provider, user] = await Promise.all([
      this.deps.storage.identityProviders.get(pending.providerId),
      this.deps.storage.users.get(userId),
    ]);
    if (provider === undefined || user === undefined) return undefined;
    return this.link(
      provider,
      {
        issuer: pending.issuer,
        subject: pending.subject,
        username: pending.label,
        email: null,
        emailVerified: false,
        name: null,
        amr: null,
        acr: null,
      },
      user,
    );
  }

  /** The user's links, oldest first. */
  links(userId: string): Promise<FederatedLink[]> {
    return this.deps.storage.federatedLinks.listByUser(userId);
  }

  /**
   * Removes one of the user's links, unless it is their last way to sign in (no password, no passkey,
   * no other link): then the person would be locked out of their own account.
   */
  async unlink(user: User, linkId: string): Promise<UnlinkResult> {
    const links = await this.deps.storage.federatedLinks.listByUser(user.id);
    if (!links.some((link) => link.id === linkId)) return 'not-found';
    if ((await this.waysIn(user, { links })) <= 1) return 'last-way-in';
    return (await this.deps.storage.federatedLinks.delete(user.id, linkId)) ? 'removed' : 'not-found';
  }

  /**
   * How many ways the user has to sign in on their own: a password, each passkey, each link. The
   * security page refuses to remove the last (a link here, a passkey on its own section).
   */
  async waysIn(user: User, known: { links?: readonly FederatedLink[] } = {}): Promise<number> {
    const [links, passkeys] = await Promise.all([
      known.links ?? this.deps.storage.federatedLinks.listByUser(user.id),
      this.deps.storage.passkeys.listByUser(user.id),
    ]);
    return (user.passwordHash === '' ? 0 : 1) + passkeys.length + links.length;
  }

  /** Which local user an upstream person is (rules a, c, d, e), without changing anything. */
  private async resolve(
    provider: IdentityProvider,
    identity: UpstreamIdentity,
  ): Promise<Resolution | PendingLink> {
    const { users, federatedLinks } = this.deps.storage;
    // (a) A link names the upstream person whichever provider entry it was made through.
    const link = await federatedLinks.find(identity.issuer, identity.subject);
    if (link !== undefined) {
      const user = await users.get(link.userId);
      if (user !== undefined) return { kind: 'user', user, link };
    }
    const byAddress =
      identity.email === null ? [] : await users.listByEmail(identity.email, CANDIDATES_PER_IDENTITY);
    // (c) Both sides verified the address, and it names one user: never an unverified one, either side.
    if (provider.linkByVerifiedEmail && identity.emailVerified && identity.email !== null) {
      const verified = byAddress.filter(
        (user) => user.emailVerified && user.email !== null && sameAddress(user.email, identity.email!),
      );
      if (verified.length === 1) {
        const user = verified[0]!;
        return { kind: 'user', user, newLink: this.newLink(provider, identity, user.id) };
      }
    }
    // (d) Someone here may be this person: they prove it by signing in before anything is linked.
    const username = usableUsername(identity.username);
    const byName = username === undefined ? undefined : await users.getByUsername(username);
    const candidates = [...byAddress, ...(byName ? [byName] : [])]
      .map((user) => user.id)
      .filter((id, index, all) => all.indexOf(id) === index);
    if (candidates.length > 0) {
      return {
        providerId: provider.id,
        issuer: identity.issuer,
        subject: identity.subject,
        label: linkLabel(identity),
        candidates,
        reason: byAddress.length > 0 ? 'email' : 'username',
      };
    }
    // (e) Nobody here: a new user.
    const draft = newUser(provider, identity, username, this.deps.clock.now());
    return { kind: 'create', draft, newLink: this.newLink(provider, identity, draft.id) };
  }

  /** The attempt's verification: the user read again (disabled meanwhile?), the link made or used. */
  private async complete(resolution: Resolution): Promise<AuthenticatorResult> {
    const { users, federatedLinks } = this.deps.storage;
    const now = this.deps.clock.now();
    if (resolution.kind === 'user') {
      const user = await users.get(resolution.user.id);
      if (user === undefined) return { outcome: 'refused' };
      // SignInService refuses a disabled user after this: nothing is recorded as used or linked for one.
      if (user.disabled) return { outcome: 'verified', user };
      if (resolution.link !== undefined) await federatedLinks.recordUse(resolution.link.id, now);
      if (resolution.newLink !== undefined) {
        const link = { ...resolution.newLink, lastUsedAt: now };
        if (!(await federatedLinks.insert(link))) {
          // Linked meanwhile (another tab, another process): to this user, it signs them in.
          const held = await federatedLinks.find(link.issuer, link.subject);
          if (held?.userId !== user.id) return { outcome: 'refused' };
        }
      }
      return { outcome: 'verified', user };
    }
    const user = await this.insertUser(resolution.draft);
    const link = { ...resolution.newLink, userId: user.id, lastUsedAt: now };
    if (await federatedLinks.insert(link)) return { outcome: 'verified', user };
    // The same upstream person's first sign-in, twice at once: the other made the link; this user goes.
    await users.delete(user.id);
    const held = await federatedLinks.find(link.issuer, link.subject);
    const holder = held && (await users.get(held.userId));
    return holder === undefined ? { outcome: 'refused' } : { outcome: 'verified', user: holder };
  }

  /**
   * Stores a new user under its user name, or, taken (by someone this person could not be told
   * apart from: a name made from an address, or taken meanwhile), the first free of name-2, name-3, …
   * and at last a random suffix.
   */
  private async insertUser(draft: User): Promise<User> {
    const users = this.deps.storage.users;
    const base = draft.username;
    for (let attempt = 1; attempt <= 10; attempt++) {
      const username =
        attempt === 1
          ? base
          : attempt < 10
            ? `${base.slice(0, 120)}-${attempt}`
            : `${base.slice(0, 110)}-${randomToken('', 6)}`;
      const user = { ...draft, username };
      if (await users.insert(user)) return user;
    }
    throw new Error('no free user name for a new federated user');
  }

  private newLink(provider: IdentityProvider, identity: UpstreamIdentity, userId: string): FederatedLink {
    return {
      id: randomUUID(),
      userId,
      providerId: provider.id,
      issuer: identity.issuer,
      subject: identity.subject,
      label: linkLabel(identity),
      createdAt: this.deps.clock.now(),
      lastUsedAt: null,
    };
  }
}

/** What names an upstream account to its person: the user name, else the address. */
function linkLabel(identity: Pick<UpstreamIdentity, 'username' | 'email'>): string | null {
  const label = identity.username ?? identity.email;
  return label === null ? null : label.slice(0, 200);
}

/**
 * A user made from upstream claims (rule e): no password (password sign-in can never succeed for it,
 * passwords.ts), the address kept but verified only when the provider is trusted to link by verified
 * address and said it is verified (decision 40); otherwise its owner verifies it here by mail.
 */
function newUser(
  provider: IdentityProvider,
  identity: UpstreamIdentity,
  username: string | undefined,
  now: number,
): User {
  const email = orNull(() => validateEmail(identity.email));
  const fromAddress = email === null ? undefined : usableUsername(email.slice(0, email.lastIndexOf('@')));
  return {
    id: randomUUID(),
    username: username ?? fromAddress ?? `${provider.id}-user`,
    passwordHash: '',
    email,
    emailVerified: email !== null && provider.linkByVerifiedEmail && identity.emailVerified,
    name: orNull(() => validateName(identity.name)),
    admin: false,
    disabled: false,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * What a session records of a federated sign-in: the method and time (SignInService's), the provider,
 * and the upstream's own `amr`/`acr` only for a provider trusted for them (assurance.ts reads them).
 */
export function federatedAuthentication(
  base: SessionAuthentication,
  provider: Pick<IdentityProvider, 'id' | 'trustUpstreamAssurance'>,
  identity: Pick<UpstreamIdentity, 'amr' | 'acr'>,
): SessionAuthentication {
  const upstream =
    provider.trustUpstreamAssurance && (identity.amr !== null || identity.acr !== null)
      ? {
          ...(identity.amr !== null ? { amr: identity.amr.slice(0, 20).map((v) => v.slice(0, 32)) } : {}),
          ...(identity.acr !== null ? { acr: identity.acr.slice(0, 256) } : {}),
        }
      : undefined;
  return { ...base, provider: provider.id, ...(upstream !== undefined ? { upstream } : {}) };
}
