import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IdentityProvider, User } from '../../src/core/model.js';
import type { Storage } from '../../src/core/ports.js';
import { Federation, type FederatedSignIn } from '../../src/core/federation/federation.js';
import { PasswordAuthenticator } from '../../src/core/sign-in/password-authenticator.js';
import { SignInService } from '../../src/core/sign-in/sign-in-service.js';
import {
  UpstreamError,
  type UpstreamAuthorization,
  type UpstreamIdentity,
  type UpstreamProviders,
  type UpstreamRequest,
} from '../../src/core/federation/upstream.js';
import { ManualClock } from '../../src/shared/clock.js';
import { addUser, PASSWORD } from '../helpers/fakes/fixtures.js';
import { memoryStorage } from '../helpers/fakes/memory-storage.js';
import { START } from '../helpers/fakes/test-engine.js';
import { insertProvider, upstreamPerson } from '../helpers/federation.js';

const HERE = '192.0.2.1';
const POLICY = { failuresPerUsername: 3, failuresPerAddress: 5, windowSeconds: 900 };

/** A port that records what it was asked and answers with `identity` (the unit tests' upstream). */
class ScriptedUpstream implements UpstreamProviders {
  begun: { provider: string; redirectUri: string; request: UpstreamRequest }[] = [];
  identity: UpstreamIdentity | UpstreamError | undefined;
  async discover(): Promise<never> {
    throw new UpstreamError('unreachable', 'not in unit tests');
  }
  async begin(provider: IdentityProvider, redirectUri: string, request: UpstreamRequest) {
    this.begun.push({ provider: provider.id, redirectUri, request });
    return { url: 'https://upstream.example/authorize', state: 's', nonce: 'n', codeVerifier: 'v' };
  }
  async finish(): Promise<UpstreamIdentity> {
    if (this.identity === undefined) throw new Error('no identity scripted');
    if (this.identity instanceof UpstreamError) throw this.identity;
    return this.identity;
  }
}

interface World {
  storage: Storage;
  clock: ManualClock;
  federation: Federation;
  upstream: ScriptedUpstream;
  provider: IdentityProvider;
  password: PasswordAuthenticator;
  service: SignInService;
  /** A local user with a password, and optionally an address (verified or not). */
  local(username: string, email?: string, verified?: boolean): Promise<User>;
  signIn(
    identity: Partial<UpstreamIdentity> & { subject: string },
    provider?: IdentityProvider,
  ): Promise<FederatedSignIn>;
  userCount(): Promise<number>;
}

async function world(providerOverrides: Partial<IdentityProvider> = {}): Promise<World> {
  const storage = memoryStorage();
  const clock = new ManualClock(START);
  const service = new SignInService(storage.throttle, clock, POLICY);
  const upstream = new ScriptedUpstream();
  const federation = new Federation({
    storage,
    clock,
    signIns: service,
    upstream,
    redirectUri: (id) => `https://gatehouse.test/sign-in/callback/${id}`,
  });
  const provider = await insertProvider(storage, { id: 'corp', name: 'Corp', ...providerOverrides });
  const w: World = {
    storage,
    clock,
    federation,
    upstream,
    provider,
    service,
    password: new PasswordAuthenticator(storage.users, clock),
    async local(username, email, verified = false) {
      const user = await addUser({ storage, clock }, username);
      if (email === undefined) return user;
      assert.ok(await storage.users.update({ ...user, email }));
      if (verified) assert.ok(await storage.users.markEmailVerified(user.id, email));
      return (await storage.users.get(user.id))!;
    },
    signIn: (claims, p = provider) => federation.signIn(p, upstreamPerson(p, claims), HERE),
    async userCount() {
      return (await storage.users.list(1000, 0)).total;
    },
  };
  return w;
}

function signedIn(result: FederatedSignIn): Extract<FederatedSignIn, { outcome: 'signed-in' }> {
  assert.equal(result.outcome, 'signed-in', JSON.stringify(result));
  return result as Extract<FederatedSignIn, { outcome: 'signed-in' }>;
}

interface Row {
  name: string;
  provider?: Partial<IdentityProvider>;
  run(w: World): Promise<void>;
}

const LINKING_ROWS: Row[] = [
  {
    name: '(e) a first sign-in creates a user with no password, the mapped name, an unverified address, and its link',
    async run(w) {
      const result = signedIn(
        await w.signIn({
          subject: 'u-1',
          username: 'carol',
          email: 'carol@corp.example',
          emailVerified: true,
          name: 'Carol C',
        }),
      );
      assert.equal(result.via, 'created');
      assert.equal(result.user.username, 'carol');
      assert.equal(result.user.passwordHash, '');
      assert.equal(result.user.email, 'carol@corp.example');
      assert.equal(result.user.emailVerified, false, 'not trusted to link by address: verified here by mail');
      assert.equal(result.user.name, 'Carol C');
      assert.deepEqual(result.authentication, { method: 'federated', at: START, provider: 'corp' });
      const [link] = await w.storage.federatedLinks.listByUser(result.user.id);
      assert.deepEqual(
        { ...link, id: undefined },
        {
          id: undefined,
          userId: result.user.id,
          providerId: 'corp',
          issuer: 'https://corp.example',
          subject: 'u-1',
          label: 'carol',
          createdAt: START,
          lastUsedAt: START,
        },
      );
    },
  },
  {
    name: '(e) a provider trusted to link by verified address keeps the upstream’s verified flag on a new user',
    provider: { linkByVerifiedEmail: true },
    async run(w) {
      const result = signedIn(
        await w.signIn({ subject: 'u-1', username: 'carol', email: 'c@corp.example', emailVerified: true }),
      );
      assert.equal(result.user.emailVerified, true);
      const unverified = signedIn(
        await w.signIn({ subject: 'u-2', username: 'dan', email: 'd@corp.example' }),
      );
      assert.equal(unverified.user.emailVerified, false);
    },
  },
  {
    name: '(a) the second sign-in reuses the link: the same user, its use recorded, nobody created',
    async run(w) {
      const first = signedIn(await w.signIn({ subject: 'u-1', username: 'carol' }));
      w.clock.advance(60);
      const again = signedIn(
        await w.signIn({ subject: 'u-1', username: 'carol-renamed', email: 'x@y.example' }),
      );
      assert.equal(again.via, 'link');
      assert.equal(again.user.id, first.user.id);
      assert.equal(await w.userCount(), 1);
      const [link] = await w.storage.federatedLinks.listByUser(first.user.id);
      assert.equal(link?.lastUsedAt, START + 60);
    },
  },
  {
    name: '(c) link by verified address: both sides verified, one user: linked to that user',
    provider: { linkByVerifiedEmail: true },
    async run(w) {
      const alice = await w.local('alice', 'Alice@Example.com', true);
      const result = signedIn(
        await w.signIn({ subject: 'a-1', username: 'al', email: 'alice@example.com', emailVerified: true }),
      );
      assert.equal(result.via, 'verified-email');
      assert.equal(result.user.id, alice.id);
      assert.equal((await w.storage.federatedLinks.find('https://corp.example', 'a-1'))?.userId, alice.id);
      assert.equal(await w.userCount(), 1);
    },
  },
  {
    name: '(c) off: the same verified address on both sides only asks the person to sign in first (d)',
    async run(w) {
      const alice = await w.local('alice', 'alice@example.com', true);
      const result = await w.signIn({
        subject: 'a-1',
        username: 'al',
        email: 'alice@example.com',
        emailVerified: true,
      });
      assert.deepEqual(result, {
        outcome: 'link-required',
        pending: {
          providerId: 'corp',
          issuer: 'https://corp.example',
          subject: 'a-1',
          label: 'al',
          candidates: [alice.id],
          reason: 'email',
        },
      });
      assert.equal(await w.storage.federatedLinks.find('https://corp.example', 'a-1'), undefined);
    },
  },
  {
    name: 'an upstream address not verified never links, even to a verified local one',
    provider: { linkByVerifiedEmail: true },
    async run(w) {
      const alice = await w.local('alice', 'alice@example.com', true);
      const result = await w.signIn({ subject: 'a-1', email: 'alice@example.com', emailVerified: false });
      assert.equal(result.outcome, 'link-required');
      assert.deepEqual(result.outcome === 'link-required' && result.pending.candidates, [alice.id]);
      assert.equal(await w.userCount(), 1);
    },
  },
  {
    name: 'a local address not verified is never linked by address, though the upstream verified it',
    provider: { linkByVerifiedEmail: true },
    async run(w) {
      const alice = await w.local('alice', 'alice@example.com', false);
      const result = await w.signIn({ subject: 'a-1', email: 'alice@example.com', emailVerified: true });
      assert.equal(result.outcome, 'link-required');
      assert.deepEqual(result.outcome === 'link-required' && result.pending.candidates, [alice.id]);
      assert.equal(await w.storage.federatedLinks.find('https://corp.example', 'a-1'), undefined);
    },
  },
  {
    name: 'two local users with the address verified: no guess, both are candidates',
    provider: { linkByVerifiedEmail: true },
    async run(w) {
      const a = await w.local('a', 'shared@example.com', true);
      const b = await w.local('b', 'shared@example.com', true);
      const result = await w.signIn({ subject: 's-1', email: 'shared@example.com', emailVerified: true });
      assert.deepEqual(
        result.outcome === 'link-required' && [...result.pending.candidates].sort(),
        [a.id, b.id].sort(),
      );
    },
  },
  {
    name: '(d) the upstream user name is a local user’s: nothing created or linked, that user is the candidate',
    async run(w) {
      const bob = await w.local('bob');
      const result = await w.signIn({ subject: 'b-1', username: 'bob', email: 'bob@elsewhere.example' });
      assert.deepEqual(result.outcome === 'link-required' && result.pending, {
        providerId: 'corp',
        issuer: 'https://corp.example',
        subject: 'b-1',
        label: 'bob',
        candidates: [bob.id],
        reason: 'username',
      });
      assert.equal(await w.userCount(), 1);
    },
  },
  {
    name: '(e) a name made from the address that someone else has is made unique, not attributed',
    async run(w) {
      await w.local('bob');
      const result = signedIn(await w.signIn({ subject: 'b-2', email: 'bob@elsewhere.example' }));
      assert.equal(result.user.username, 'bob-2');
      const third = signedIn(await w.signIn({ subject: 'b-3', email: 'bob@third.example' }));
      assert.equal(third.user.username, 'bob-3');
      const nameless = signedIn(await w.signIn({ subject: 'n-1' }));
      assert.equal(nameless.user.username, 'corp-user');
    },
  },
  {
    name: 'a user made by federation never signs in with a password, not even an empty one',
    async run(w) {
      const result = signedIn(await w.signIn({ subject: 'u-1', username: 'carol' }));
      for (const password of ['', PASSWORD, 'anything at all']) {
        const attempt = await w.service.attempt(
          w.password,
          { username: result.user.username, password },
          { address: '198.51.100.1' },
        );
        assert.deepEqual(attempt, { outcome: 'wrong-credentials' });
      }
    },
  },
  {
    name: 'a disabled user is refused through a link, and nothing is recorded as used',
    async run(w) {
      const first = signedIn(await w.signIn({ subject: 'u-1', username: 'carol' }));
      assert.ok(await w.storage.users.update({ ...first.user, disabled: true }));
      w.clock.advance(30);
      assert.deepEqual(await w.signIn({ subject: 'u-1' }), { outcome: 'disabled' });
      const [link] = await w.storage.federatedLinks.listByUser(first.user.id);
      assert.equal(link?.lastUsedAt, START);
    },
  },
  {
    name: 'the lockout applies: a (name, source) locked by wrong passwords refuses the federated sign-in too',
    async run(w) {
      const alice = await w.local('alice');
      assert.equal(
        (await w.federation.link(w.provider, upstreamPerson(w.provider, { subject: 'a-1' }), alice)).outcome,
        'linked',
      );
      for (let i = 0; i < POLICY.failuresPerUsername; i++) {
        await w.service.attempt(w.password, { username: 'alice', password: 'wrong' }, { address: HERE });
      }
      const result = await w.signIn({ subject: 'a-1' });
      assert.equal(result.outcome, 'throttled');
    },
  },
  {
    name: 'a trusted provider’s amr and acr are recorded; an untrusted one’s are not',
    provider: { trustUpstreamAssurance: true },
    async run(w) {
      const trusted = signedIn(await w.signIn({ subject: 'u-1', amr: ['pwd', 'otp'], acr: 'phr' }));
      assert.deepEqual(trusted.authentication, {
        method: 'federated',
        at: START,
        provider: 'corp',
        upstream: { amr: ['pwd', 'otp'], acr: 'phr' },
      });
      const other = await insertProvider(w.storage, { id: 'other' });
      const untrusted = signedIn(await w.signIn({ subject: 'u-1', amr: ['pwd', 'otp'], acr: 'phr' }, other));
      assert.deepEqual(untrusted.authentication, { method: 'federated', at: START, provider: 'other' });
    },
  },
];

describe('federated sign-in: the linking rules (decision 40)', () => {
  for (const row of LINKING_ROWS) it(row.name, async () => row.run(await world(row.provider)));
});

describe('linking from the security page and after a sign-in (decision 40)', () => {
  it('links to the signed-in user once; another user cannot take a linked account', async () => {
    const w = await world();
    const alice = await w.local('alice');
    const bob = await w.local('bob');
    const person = upstreamPerson(w.provider, { subject: 'p-1', username: 'pat' });
    const linked = await w.federation.link(w.provider, person, alice);
    assert.equal(linked.outcome, 'linked');
    assert.deepEqual(await w.federation.link(w.provider, person, alice), { outcome: 'already-linked' });
    assert.deepEqual(await w.federation.link(w.provider, person, bob), { outcome: 'linked-to-another' });
    assert.equal((await w.storage.federatedLinks.find(person.issuer, 'p-1'))?.userId, alice.id);
    // The link now signs alice in (rule a), whatever the upstream claims say.
    const result = signedIn(await w.signIn({ subject: 'p-1', username: 'bob' }));
    assert.equal(result.user.id, alice.id);
  });

  it('a pending link is made only for one of its candidates, after they signed in', async () => {
    const w = await world();
    const alice = await w.local('alice', 'alice@example.com');
    const mallory = await w.local('mallory');
    const result = await w.signIn({ subject: 'a-1', email: 'alice@example.com', emailVerified: true });
    assert.equal(result.outcome, 'link-required');
    if (result.outcome !== 'link-required') return;
    assert.equal(await w.federation.completePendingLink(result.pending, mallory.id), undefined);
    assert.equal(await w.storage.federatedLinks.find('https://corp.example', 'a-1'), undefined);
    const done = await w.federation.completePendingLink(result.pending, alice.id);
    assert.equal(done?.outcome, 'linked');
    assert.equal(signedIn(await w.signIn({ subject: 'a-1' })).user.id, alice.id);
  });

  it('re-authentication takes only an upstream account linked to the signed-in user', async () => {
    const w = await world();
    const alice = await w.local('alice');
    const bob = await w.local('bob');
    await w.federation.link(w.provider, upstreamPerson(w.provider, { subject: 'a-1' }), alice);
    const again = await w.federation.reauthenticate(
      w.provider,
      upstreamPerson(w.provider, { subject: 'a-1' }),
      alice,
      HERE,
    );
    assert.equal(again.outcome, 'signed-in');
    assert.deepEqual(
      await w.federation.reauthenticate(
        w.provider,
        upstreamPerson(w.provider, { subject: 'a-1' }),
        bob,
        HERE,
      ),
      { outcome: 'wrong-credentials' },
    );
    assert.deepEqual(
      await w.federation.reauthenticate(
        w.provider,
        upstreamPerson(w.provider, { subject: 'nobody' }),
        alice,
        HERE,
      ),
      { outcome: 'wrong-credentials' },
    );
  });

  it('removing a link: refused when it is the last way in; allowed beside a password, a passkey or another link', async () => {
    const w = await world();
    const created = signedIn(await w.signIn({ subject: 'u-1', username: 'carol' })).user;
    const [only] = await w.federation.links(created.id);
    assert.equal(await w.federation.unlink(created, only!.id), 'last-way-in');
    assert.equal((await w.federation.links(created.id)).length, 1);
    // A second link: either may go, not both.
    await w.federation.link(w.provider, upstreamPerson(w.provider, { subject: 'u-2' }), created);
    assert.equal(await w.federation.unlink(created, only!.id), 'removed');
    const [second] = await w.federation.links(created.id);
    assert.equal(await w.federation.unlink(created, second!.id), 'last-way-in');
    // A passkey is a way in.
    await w.storage.passkeys.insert({
      id: 'pk-1',
      userId: created.id,
      name: 'Laptop',
      publicKey: 'AA',
      signCount: 0,
      transports: [],
      backupEligible: false,
      backedUp: false,
      createdAt: START,
      lastUsedAt: null,
    });
    assert.equal(await w.federation.unlink(created, second!.id), 'removed');
    // A user with a password may remove every link; another user's link is not theirs to remove.
    const alice = await w.local('alice');
    await w.federation.link(w.provider, upstreamPerson(w.provider, { subject: 'a-1' }), alice);
    const [aliceLink] = await w.federation.links(alice.id);
    assert.equal(await w.federation.unlink(created, aliceLink!.id), 'not-found');
    assert.equal(await w.federation.unlink(alice, aliceLink!.id), 'removed');
  });
});

describe('the upstream flow through the port (decision 40)', () => {
  it('begin asks the provider’s required acr first, then what the request asked, at the callback URI', async () => {
    const w = await world({ requiredAcr: 'urn:corp:mfa' });
    await w.federation.begin(w.provider, { acrValues: ['phr', 'urn:corp:mfa'], maxAge: 0, prompt: 'login' });
    assert.deepEqual(w.upstream.begun, [
      {
        provider: 'corp',
        redirectUri: 'https://gatehouse.test/sign-in/callback/corp',
        request: { acrValues: ['urn:corp:mfa', 'phr'], maxAge: 0, prompt: 'login' },
      },
    ]);
  });

  it('finish refuses an answer without the provider’s required acr', async () => {
    const w = await world({ requiredAcr: 'urn:corp:mfa' });
    const expected: Omit<UpstreamAuthorization, 'url'> = { state: 's', nonce: 'n', codeVerifier: 'v' };
    const url = new URL('https://gatehouse.test/sign-in/callback/corp?code=c&state=s');
    w.upstream.identity = upstreamPerson(w.provider, { subject: 'u', acr: 'urn:corp:pwd' });
    await assert.rejects(w.federation.finish(w.provider, url, expected), (error: unknown) => {
      assert.ok(error instanceof UpstreamError);
      assert.equal(error.kind, 'invalid-response');
      assert.equal(error.detail, 'acr-not-delivered');
      return true;
    });
    w.upstream.identity = upstreamPerson(w.provider, { subject: 'u', acr: 'urn:corp:mfa' });
    assert.equal((await w.federation.finish(w.provider, url, expected)).subject, 'u');
  });

  it('a state is spent once: the second use is a replay, until it expires', async () => {
    const w = await world();
    assert.equal(await w.federation.spendState('state-1', START + 600), true);
    assert.equal(await w.federation.spendState('state-1', START + 600), false);
    assert.equal(await w.federation.spendState('state-2', START + 600), true);
  });
});
