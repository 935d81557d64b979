import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { describe, it } from 'node:test';
import { calculateJwkThumbprint } from 'jose';
import { deriveServerKeys } from '../../src/compose/engine-policy.js';
import { noUpstreamProviders } from '../../src/core/engine.js';
import { open } from '../../src/core/keys/sealed-box.js';
import type { FederatedLink, IdentityProvider } from '../../src/core/model.js';
import { slugOf, type IdentityProviderInput } from '../../src/core/federation/identity-providers.js';
import { sealContext, UpstreamError, type DiscoveredProvider } from '../../src/core/federation/upstream.js';
import { ConflictError, NotFoundError, ValidationError } from '../../src/core/validation.js';
import { addClient, addUser } from '../helpers/fakes/fixtures.js';
import { ISSUER, START, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

const ACME = 'https://idp.acme.example';
const SECRET = 'upstream-client-secret-0123456789';
const KEY = deriveServerKeys(Buffer.alloc(32, 7)).identityProviderKey;

/**
 * An engine whose upstream discovery answers from `documents` (by issuer) and records each issuer it
 * was asked about; an issuer without a document fails as unreachable.
 */
async function engineWithUpstreams(documents: Record<string, DiscoveredProvider | UpstreamError> = {}) {
  const asked: string[] = [];
  const t = await testEngine({
    upstreamProviders: {
      ...noUpstreamProviders,
      async discover(issuer) {
        asked.push(issuer);
        const found = documents[issuer];
        if (found === undefined) throw new UpstreamError('unreachable', `${issuer}: connect ECONNREFUSED`);
        if (found instanceof UpstreamError) throw found;
        return found;
      },
    },
  });
  return { t, asked, registry: t.engine.identityProviders };
}

const discovered = (issuer: string, userinfo = true): DiscoveredProvider => ({
  issuer,
  authorizationEndpoint: `${issuer}/authorize`,
  tokenEndpoint: `${issuer}/token`,
  userinfoEndpoint: userinfo ? `${issuer}/userinfo` : null,
});

const oidcInput = (overrides: Partial<IdentityProviderInput> = {}): IdentityProviderInput => ({
  name: 'Acme SSO',
  issuer: ACME,
  client_id: 'gatehouse',
  client_secret: SECRET,
  ...overrides,
});

const github = (overrides: Partial<IdentityProviderInput> = {}): IdentityProviderInput => ({
  name: 'GitHub',
  authorization_endpoint: 'https://github.example/login/oauth/authorize',
  token_endpoint: 'https://github.example/login/oauth/access_token',
  userinfo_endpoint: 'https://api.github.example/user',
  client_id: 'Iv1.abc',
  client_secret: SECRET,
  claim_mapping: { subject: 'id', username: 'login' },
  ...overrides,
});

/** Runs `action`, which must throw a ValidationError naming `field` (its message matching `message`). */
async function refused(action: () => Promise<unknown>, field: string, message?: RegExp): Promise<void> {
  await assert.rejects(action, (error: unknown) => {
    assert.ok(error instanceof ValidationError, `a ValidationError, not ${String(error)}`);
    assert.equal(error.field, field, error.message);
    if (message !== undefined) assert.match(error.message, message);
    assert.ok(!error.message.includes(SECRET), 'never the secret');
    return true;
  });
}

describe('identity providers: validation (decision 39)', () => {
  it('refuses bad input with the field at fault, discovering and storing nothing', async () => {
    const { asked, registry } = await engineWithUpstreams({ [ACME]: discovered(ACME) });
    const cases: Array<[string, IdentityProviderInput, string, RegExp?]> = [
      ['no name', oidcInput({ name: '  ' }), 'name'],
      ['a name too long', oidcInput({ name: 'x'.repeat(101) }), 'name'],
      ['a bidirectional override', oidcInput({ name: 'Acme\u202eOSS' }), 'name', /formatting/],
      ['an id not a slug', oidcInput({ id: 'Acme_SSO' }), 'id'],
      ['an id ending with a hyphen', oidcInput({ id: 'acme-' }), 'id'],
      ['a name without a Latin letter, and no id', oidcInput({ name: '東京' }), 'id', /--id/],
      ['an http issuer', oidcInput({ issuer: 'http://idp.acme.example' }), 'issuer', /https/],
      ['an issuer with a query', oidcInput({ issuer: `${ACME}?tenant=1` }), 'issuer', /query/],
      ['an issuer with a fragment', oidcInput({ issuer: `${ACME}#x` }), 'issuer', /fragment/],
      ['an issuer with user information', oidcInput({ issuer: 'https://u:p@idp.example' }), 'issuer'],
      ['not a URL', oidcInput({ issuer: 'idp.acme.example' }), 'issuer'],
      [
        'an issuer and endpoints',
        oidcInput({ token_endpoint: `${ACME}/token` }),
        'token_endpoint',
        /discovery/,
      ],
      ['neither issuer nor endpoints', oidcInput({ issuer: undefined }), 'issuer', /OAuth 2\.0/],
      ['no client id', oidcInput({ client_id: '' }), 'client_id'],
      ['a client id with a newline', oidcInput({ client_id: 'a\nb' }), 'client_id'],
      ['an unknown client auth', oidcInput({ client_auth: 'tls_client_auth' }), 'client_auth'],
      ['no secret and no method', oidcInput({ client_secret: undefined }), 'client_secret', /none/],
      [
        'a secret method without a secret',
        oidcInput({ client_secret: undefined, client_auth: 'client_secret_post' }),
        'client_secret',
      ],
      [
        'a secret for a public client',
        oidcInput({ client_auth: 'none' }),
        'client_secret',
        /no client secret/,
      ],
      ['a secret for private_key_jwt', oidcInput({ client_auth: 'private_key_jwt' }), 'client_secret'],
      ['a secret with a control character', oidcInput({ client_secret: `${SECRET}\u0007` }), 'client_secret'],
      ['an OpenID Provider asked without openid', oidcInput({ scopes: ['email'] }), 'scopes', /openid/],
      ['a malformed scope', oidcInput({ scopes: ['openid', 'a"b'] }), 'scopes'],
      [
        'an unknown claim',
        oidcInput({ claim_mapping: { groups: 'groups' } as IdentityProviderInput['claim_mapping'] }),
        'claim_mapping.groups',
      ],
      ['a claim with a space', oidcInput({ claim_mapping: { email: 'e mail' } }), 'claim_mapping.email'],
      [
        'a switch not a boolean',
        oidcInput({ link_by_verified_email: 'yes' as unknown as boolean }),
        'link_by_verified_email',
      ],
      ['an acr with a space', oidcInput({ required_acr: 'a b' }), 'required_acr'],
      ['an http logo', oidcInput({ logo_uri: 'http://acme.example/logo.png' }), 'logo_uri'],
      [
        'a plain OAuth 2.0 provider without its subject',
        github({ claim_mapping: {} }),
        'claim_mapping.subject',
      ],
      [
        'a plain OAuth 2.0 provider without userinfo',
        github({ userinfo_endpoint: undefined }),
        'userinfo_endpoint',
        /userinfo/,
      ],
      ['an http endpoint', github({ token_endpoint: 'http://github.example/token' }), 'token_endpoint'],
    ];
    for (const [name, input, field, message] of cases) {
      await refused(() => registry.create(input), field, message).catch((error: Error) => {
        throw new Error(`${name}: ${error.message}`);
      });
    }
    assert.deepEqual(asked, [], 'nothing was discovered for input refused before');
    assert.equal((await registry.list(100, 0)).total, 0, 'nothing stored');
  });

  it('an OpenID Provider is discovered at creation: a failure says why, and stores nothing', async () => {
    const elsewhere = 'https://idp.elsewhere.example';
    const { asked, registry } = await engineWithUpstreams({
      [elsewhere]: discovered('https://idp.other.example'),
      'https://idp.broken.example': new UpstreamError(
        'invalid-response',
        'its metadata has no token_endpoint',
      ),
    });
    await refused(() => registry.create(oidcInput()), 'issuer', /discovery failed at .*ECONNREFUSED/);
    await refused(
      () => registry.create(oidcInput({ issuer: 'https://idp.broken.example' })),
      'issuer',
      /discovery failed.*no token_endpoint/,
    );
    await refused(
      () => registry.create(oidcInput({ issuer: elsewhere })),
      'issuer',
      /names the issuer https:\/\/idp\.other\.example/,
    );
    assert.deepEqual(asked, [ACME, 'https://idp.broken.example', elsewhere]);
    assert.equal((await registry.list(100, 0)).total, 0);
  });

  it('makes an id from the name; a taken id is a conflict that says to choose one', async () => {
    const { registry } = await engineWithUpstreams({ [ACME]: discovered(ACME) });
    const first = await registry.create(oidcInput({ name: 'Société Générale SSO!' }));
    assert.equal(first.id, 'societe-generale-sso');
    await assert.rejects(
      () => registry.create(oidcInput({ name: 'Société Générale SSO' })),
      (error: unknown) =>
        error instanceof ConflictError && error.field === 'id' && /--id/.test(error.message),
    );
    const second = await registry.create(oidcInput({ name: 'Société Générale SSO', id: 'sg-2' }));
    assert.equal(second.id, 'sg-2');
    assert.equal((await registry.list(100, 0)).total, 2);
  });

  it('slugs of names', () => {
    const table: Array<[string, string]> = [
      ['Acme SSO', 'acme-sso'],
      ['  --Okta (EU)--  ', 'okta-eu'],
      ['Ünïcödé', 'unicode'],
      ['東京', ''],
      ['a'.repeat(70), 'a'.repeat(64)],
      [`${'a'.repeat(63)} b`, 'a'.repeat(63)],
    ];
    for (const [name, slug] of table) assert.equal(slugOf(name), slug, name);
  });
});

describe('identity providers: what is stored and shown (decision 39)', () => {
  it('an OpenID Provider: discovered endpoints, defaults, the secret sealed and never shown', async () => {
    const { t, registry } = await engineWithUpstreams({ [ACME]: discovered(ACME) });
    const provider = await registry.create(oidcInput());
    assert.equal(provider.id, 'acme-sso');
    assert.equal(provider.kind, 'oidc');
    assert.equal(provider.authorizationEndpoint, `${ACME}/authorize`);
    assert.equal(provider.userinfoEndpoint, `${ACME}/userinfo`);
    assert.deepEqual(provider.scopes, ['openid', 'email', 'profile']);
    assert.equal(provider.clientAuth, 'client_secret_basic');
    assert.deepEqual(provider.claimMapping, {
      subject: 'sub',
      username: 'preferred_username',
      email: 'email',
      emailVerified: 'email_verified',
      name: 'name',
    });
    assert.equal(provider.linkByVerifiedEmail, false);
    assert.equal(provider.createdAt, START);
    const stored = (await t.storage.identityProviders.get('acme-sso')) as IdentityProvider;
    assert.deepEqual(stored, provider);
    assert.ok(!JSON.stringify(stored).includes(SECRET), 'the secret is not stored in the clear');
    const sealed = stored.clientSecretSealed as string;
    assert.equal(open(KEY, sealed, sealContext.clientSecret('acme-sso')).toString(), SECRET);
    assert.throws(() => open(KEY, sealed, sealContext.clientSecret('other')), 'bound to its provider');

    const view = registry.view(provider);
    assert.equal(view.redirect_uri, `${ISSUER}/sign-in/callback/acme-sso`);
    assert.equal(view.client_secret_set, true);
    assert.equal(view.public_jwk, null);
    assert.deepEqual(view.claim_mapping, {
      subject: 'sub',
      username: 'preferred_username',
      email: 'email',
      email_verified: 'email_verified',
      name: 'name',
    });
    const shown = JSON.stringify(view);
    for (const leak of [SECRET, sealed, 'sealed']) assert.ok(!shown.includes(leak), leak);
  });

  it('a plain OAuth 2.0 provider: endpoints as given, no discovery, its claim mapping', async () => {
    const { asked, registry } = await engineWithUpstreams();
    const provider = await registry.create(
      github({ client_auth: 'client_secret_post', scopes: ['read:user', 'user:email'] }),
    );
    assert.deepEqual(asked, []);
    assert.equal(provider.kind, 'oauth2');
    assert.equal(provider.issuer, null);
    assert.equal(provider.userinfoEndpoint, 'https://api.github.example/user');
    assert.equal(provider.clientAuth, 'client_secret_post');
    assert.deepEqual(provider.scopes, ['read:user', 'user:email']);
    assert.equal(provider.claimMapping.subject, 'id');
    assert.equal(provider.claimMapping.username, 'login');
    assert.equal(provider.claimMapping.email, 'email', 'the default');
  });

  it('private_key_jwt: an ES256 key pair, the private key sealed, the public JWK shown with its thumbprint', async () => {
    const { registry } = await engineWithUpstreams({ [ACME]: discovered(ACME) });
    const provider = await registry.create(
      oidcInput({ client_auth: 'private_key_jwt', client_secret: undefined }),
    );
    assert.equal(provider.clientSecretSealed, null);
    const jwk = provider.publicJwk as Record<string, string>;
    assert.equal(jwk.kty, 'EC');
    assert.equal(jwk.crv, 'P-256');
    assert.equal(jwk.alg, 'ES256');
    assert.equal(jwk.d, undefined, 'no private member');
    assert.equal(jwk.kid, await calculateJwkThumbprint({ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }));
    const der = open(KEY, provider.privateKeySealed as string, sealContext.privateKey(provider.id));
    const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    const signature = sign('sha256', Buffer.from('assertion'), privateKey);
    const publicKey = createPublicKey({ key: jwk, format: 'jwk' });
    assert.ok(verify('sha256', Buffer.from('assertion'), publicKey, signature), 'the pair matches');
    const view = registry.view(provider);
    assert.deepEqual(view.public_jwk, jwk);
    assert.equal(view.client_secret_set, false);
    assert.ok(!JSON.stringify(view).includes(provider.privateKeySealed as string));
  });
});

describe('identity providers: changes (decision 39)', () => {
  it('update keeps what is not given: the secret, the key, the discovered endpoints', async () => {
    const { asked, registry, t } = await engineWithUpstreams({ [ACME]: discovered(ACME) });
    const created = await registry.create(oidcInput());
    t.clock.advance(60);
    const renamed = await registry.update(created, {
      name: 'Acme',
      link_by_verified_email: true,
      claim_mapping: { username: 'email' },
      issuer: ACME,
    });
    assert.deepEqual(asked, [ACME], 'the same issuer is not discovered again');
    assert.equal(renamed.name, 'Acme');
    assert.equal(renamed.linkByVerifiedEmail, true);
    assert.equal(renamed.clientSecretSealed, created.clientSecretSealed, 'the secret kept');
    assert.equal(renamed.claimMapping.username, 'email');
    assert.equal(renamed.claimMapping.subject, 'sub', 'the mapping merged');
    assert.equal(renamed.updatedAt, START + 60);
    assert.equal(renamed.createdAt, START);
    assert.deepEqual(await t.storage.identityProviders.get(created.id), renamed);

    const resealed = await registry.update(renamed, { client_secret: 'a new secret' });
    assert.notEqual(resealed.clientSecretSealed, renamed.clientSecretSealed);
    assert.equal(
      open(KEY, resealed.clientSecretSealed as string, sealContext.clientSecret(created.id)).toString(),
      'a new secret',
    );

    const keyed = await registry.update(resealed, { client_auth: 'private_key_jwt' });
    assert.equal(keyed.clientSecretSealed, null, 'a method without a secret drops it');
    assert.ok(keyed.publicJwk !== null && keyed.privateKeySealed !== null);
    const kept = await registry.update(keyed, {
      required_acr: 'urn:acme:mfa',
      logo_uri: 'https://acme.example/l.png',
    });
    assert.equal(kept.privateKeySealed, keyed.privateKeySealed, 'the key pair stays');
    assert.deepEqual(kept.publicJwk, keyed.publicJwk);
    const cleared = await registry.update(kept, { required_acr: null, logo_uri: null });
    assert.equal(cleared.requiredAcr, null);
    assert.equal(cleared.logoUri, null);

    // A secret given to a provider that uses none makes it client_secret_basic.
    const secretAgain = await registry.update(cleared, { client_secret: SECRET });
    assert.equal(secretAgain.clientAuth, 'client_secret_basic');
    assert.equal(secretAgain.privateKeySealed, null);
    await refused(() => registry.update(secretAgain, { id: 'renamed' }), 'id', /redirect URI/);
  });

  it('a new issuer is discovered again, and refused when discovery fails, changing nothing', async () => {
    const eu = 'https://eu.idp.acme.example';
    const { asked, registry, t } = await engineWithUpstreams({
      [ACME]: discovered(ACME),
      [eu]: discovered(eu, false),
    });
    const created = await registry.create(oidcInput());
    const moved = await registry.update(created, { issuer: eu });
    assert.deepEqual(asked, [ACME, eu]);
    assert.equal(moved.tokenEndpoint, `${eu}/token`);
    assert.equal(moved.userinfoEndpoint, null);
    await refused(
      () => registry.update(moved, { issuer: 'https://gone.example' }),
      'issuer',
      /discovery failed/,
    );
    assert.deepEqual(await t.storage.identityProviders.get(created.id), moved);
  });

  it('changes kind: endpoints make a plain OAuth 2.0 provider, an issuer an OpenID Provider again', async () => {
    const { registry } = await engineWithUpstreams({ [ACME]: discovered(ACME) });
    const created = await registry.create(oidcInput());
    const plain = await registry.update(created, {
      authorization_endpoint: 'https://acme.example/oauth/authorize',
      token_endpoint: 'https://acme.example/oauth/token',
      userinfo_endpoint: 'https://acme.example/api/me',
      claim_mapping: { subject: 'uid' },
    });
    assert.equal(plain.kind, 'oauth2');
    assert.equal(plain.issuer, null);
    assert.equal(plain.userinfoEndpoint, 'https://acme.example/api/me');
    assert.equal(plain.claimMapping.subject, 'uid');
    const oidc = await registry.update(plain, { issuer: ACME, claim_mapping: { subject: 'sub' } });
    assert.equal(oidc.kind, 'oidc');
    assert.equal(oidc.authorizationEndpoint, `${ACME}/authorize`);
    await refused(
      () => registry.update(oidc, { issuer: null }),
      'issuer',
      /authorization, token and userinfo endpoints/,
    );
  });

  it('replace is the whole provider: what is left out takes its default, but the secret is kept', async () => {
    const { registry } = await engineWithUpstreams({ [ACME]: discovered(ACME) });
    const created = await registry.create(
      oidcInput({ link_by_verified_email: true, scopes: ['openid'], required_acr: 'urn:acme:mfa' }),
    );
    const replaced = await registry.replace(created, { name: 'Acme', issuer: ACME, client_id: 'gh' });
    assert.equal(replaced.linkByVerifiedEmail, false);
    assert.deepEqual(replaced.scopes, ['openid', 'email', 'profile']);
    assert.equal(replaced.requiredAcr, null);
    assert.equal(replaced.clientId, 'gh');
    assert.equal(replaced.clientSecretSealed, created.clientSecretSealed);
    await refused(() => registry.replace(created, { ...oidcInput(), id: 'other' }), 'id');
  });
});

describe('identity providers: deletion, clients and links (decision 39)', () => {
  async function withProviders(): Promise<{
    t: TestEngine;
    registry: TestEngine['engine']['identityProviders'];
    acme: IdentityProvider;
    gh: IdentityProvider;
  }> {
    const { t, registry } = await engineWithUpstreams({ [ACME]: discovered(ACME) });
    const acme = await registry.create(oidcInput());
    const gh = await registry.create(github());
    return { t, registry, acme, gh };
  }

  const link = (userId: string, provider: IdentityProvider, overrides: Partial<FederatedLink> = {}) => ({
    id: `link-${Math.random().toString(36).slice(2)}`,
    userId,
    providerId: provider.id,
    issuer: provider.issuer ?? `urn:gatehouse:idp:${provider.id}`,
    subject: `sub-${Math.random().toString(36).slice(2)}`,
    label: null,
    createdAt: START,
    lastUsedAt: null,
    ...overrides,
  });

  it('a client names existing providers only; null offers every one, [] none; an update keeps the list', async () => {
    const { t, acme, gh } = await withProviders();
    const clients = t.engine.clients;
    await assert.rejects(
      () => clients.create({ name: 'x', grant_types: ['client_credentials'], identity_providers: ['nope'] }),
      (error: unknown) =>
        error instanceof ValidationError &&
        error.field === 'identity_providers' &&
        /"nope"/.test(error.message),
    );
    await assert.rejects(
      () =>
        clients.create({ name: 'x', grant_types: ['client_credentials'], identity_providers: ['Not An Id'] }),
      (error: unknown) => error instanceof ValidationError && error.field === 'identity_providers',
    );
    const { client } = await clients.create({
      name: 'app',
      grant_types: ['client_credentials'],
      identity_providers: [gh.id, acme.id, gh.id],
    });
    assert.deepEqual(client.identityProviders, [gh.id, acme.id], 'in order, without repeats');
    const renamed = await clients.update(client, { name: 'app 2' });
    assert.deepEqual(renamed.client.identityProviders, [gh.id, acme.id]);
    const every = await clients.update(renamed.client, { identity_providers: null });
    assert.equal(every.client.identityProviders, null);
    const none = await clients.update(every.client, { identity_providers: [] });
    assert.deepEqual(none.client.identityProviders, []);
    const { client: plain } = await clients.create({ name: 'plain', grant_types: ['client_credentials'] });
    assert.equal(plain.identityProviders, null, 'every one by default');
  });

  it('offeredTo: the client’s list in its order (gone ones skipped), or every provider in name order', async () => {
    const { t, registry, acme, gh } = await withProviders();
    assert.deepEqual(
      (await registry.offeredTo(undefined)).map((provider) => provider.id),
      [acme.id, gh.id],
    );
    const chosen = await addClient(t, { identityProviders: ['gone', gh.id, acme.id] });
    assert.deepEqual(
      (await registry.offeredTo(chosen.client)).map((provider) => provider.id),
      [gh.id, acme.id],
    );
    const none = await addClient(t, { identityProviders: [] });
    assert.deepEqual(await registry.offeredTo(none.client), []);
  });

  it('delete removes the links through it and its id from clients’ lists (never widening one)', async () => {
    const { t, registry, acme, gh } = await withProviders();
    const [alice, bob] = [await addUser(t), await addUser(t)];
    await t.storage.federatedLinks.insert(link(alice.id, acme));
    await t.storage.federatedLinks.insert(link(bob.id, acme));
    const ghLink = link(alice.id, gh);
    await t.storage.federatedLinks.insert(ghLink);
    const onlyAcme = await addClient(t, { identityProviders: [acme.id] });
    const both = await addClient(t, { identityProviders: [gh.id, acme.id] });
    const every = await addClient(t, { identityProviders: null });

    assert.deepEqual(await registry.delete(acme.id), { linksRemoved: 2, clientsChanged: 2 });
    assert.equal(await registry.delete(acme.id), undefined);
    assert.equal(await registry.get(acme.id), undefined);
    assert.deepEqual((await t.storage.clients.get(onlyAcme.client.id))?.identityProviders, []);
    assert.deepEqual((await t.storage.clients.get(both.client.id))?.identityProviders, [gh.id]);
    assert.equal((await t.storage.clients.get(every.client.id))?.identityProviders, null);
    assert.deepEqual(
      (await registry.links(alice.id)).map((each) => each.id),
      [ghLink.id],
    );
    await assert.rejects(() => registry.require(acme.id), NotFoundError);
  });

  it('links as operators see them, and in the user’s summary; removing one is the owner’s only', async () => {
    const { t, registry, acme, gh } = await withProviders();
    const [alice, bob] = [await addUser(t), await addUser(t)];
    const first = link(alice.id, acme, { label: 'alice@acme.example', createdAt: START - 10 });
    const second = link(alice.id, gh, { lastUsedAt: START + 5 });
    await t.storage.federatedLinks.insert(second);
    await t.storage.federatedLinks.insert(first);
    assert.deepEqual(await registry.links(alice.id), [
      {
        id: first.id,
        provider_id: acme.id,
        provider_name: 'Acme SSO',
        issuer: ACME,
        subject: first.subject,
        label: 'alice@acme.example',
        created_at: new Date((START - 10) * 1000).toISOString(),
        last_used_at: null,
      },
      {
        id: second.id,
        provider_id: gh.id,
        provider_name: 'GitHub',
        issuer: 'urn:gatehouse:idp:github',
        subject: second.subject,
        label: null,
        created_at: new Date(START * 1000).toISOString(),
        last_used_at: new Date((START + 5) * 1000).toISOString(),
      },
    ]);
    const summary = await t.engine.account.summary(alice);
    const line = summary.methods.find((method) => method.method === 'federated');
    assert.deepEqual(line, {
      method: 'federated',
      description: `2 linked accounts (Acme SSO: alice@acme.example, GitHub: ${second.subject})`,
      count: 2,
    });
    assert.equal(
      (await t.engine.account.summary(bob)).methods.some((method) => method.method === 'federated'),
      false,
    );
    assert.equal(await registry.removeLink(bob.id, first.id), false);
    assert.equal(await registry.removeLink(alice.id, first.id), true);
    assert.equal(await registry.removeLink(alice.id, first.id), false);
    assert.deepEqual(
      (await registry.links(alice.id)).map((each) => each.id),
      [second.id],
    );
  });
});
