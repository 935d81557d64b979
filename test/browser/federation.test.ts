import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { deriveServerKeys } from '../../src/compose/engine-policy.js';
import { seal } from '../../src/core/keys/sealed-box.js';
import type { Client, IdentityProvider } from '../../src/core/model.js';
import { sealContext } from '../../src/core/federation/upstream.js';
import { BROWSER_COOKIE } from '../../src/http/ui/browser-context.js';
import { UPSTREAM_STATE_SECONDS } from '../../src/http/ui/federation/upstream-state.js';
import { backends, type Backend } from '../helpers/backends.js';
import {
  browserSkip,
  CLIENT_REDIRECT,
  clientContext,
  landedAtClient,
  launchChromium,
  pkcePair,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';
import { testProvider } from '../helpers/federation.js';
import { appCode } from '../helpers/totp.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { freePort } from '../helpers/spawned-server.js';
import { LOGIN_FORM, startOidcProvider, type OidcProvider } from '../helpers/upstream-providers.js';

/**
 * Decision 40 end to end, in Chromium: Gatehouse (at gatehouse-<backend>.test) signing people in
 * through a real node-oidc-provider and through a second Gatehouse, both as an OpenID Provider and as a
 * plain OAuth 2.0 provider whose `/v1/users/me` is the userinfo. One browser, one upstream of each
 * kind for the whole file, one Gatehouse per store.
 */

const SECRET = Buffer.alloc(32, 7);
const PASSWORD = 'correct horse battery';
const OP_SECRET = 'op-client-secret-0123456789';

/** The providers every Gatehouse under test has (ids and the names on their buttons). */
const OP = { id: 'op', name: 'Test OP' };
const OP_EMAIL = { id: 'op-email', name: 'Test OP by email' };
const OP_BAD = { id: 'op-bad', name: 'Test OP misconfigured' };
const OP_ACR = { id: 'op-acr', name: 'Test OP strict' };
const GH = { id: 'gh', name: 'Gatehouse B' };
const GH_OAUTH = { id: 'gh-oauth', name: 'Gatehouse B accounts' };

/** Every sign-in here comes from 127.0.0.1: more than a person's allowance per window. */
const NO_SIGN_IN_LIMIT = { signIn: { perAddress: 0 } };

let counter = 0;
/** A fresh name for each person, so cases never meet. */
const fresh = (prefix: string) => `${prefix}-${++counter}`;

describe(
  'sign-in through upstream identity providers, in Chromium (decision 40)',
  { skip: browserSkip },
  () => {
    let chrome: TestBrowser;
    let op: OidcProvider;
    let upstreamGatehouse: TestServer;
    const ports = new Map<Backend, number>();
    const host = (backend: Backend) => `gatehouse-${backend}.test`;

    before(async () => {
      for (const backend of backends()) ports.set(backend, await freePort());
      const upstreamPort = await freePort();
      [chrome, op, upstreamGatehouse] = await Promise.all([
        launchChromium(Object.fromEntries(backends().map((backend) => [host(backend), ports.get(backend)!]))),
        startOidcProvider({ acrValues: ['urn:gatehouse:test:loa:1', 'urn:gatehouse:test:loa:2'] }),
        // The second Gatehouse: its issuer is an address the first one's process reaches as it is.
        startTestServer(
          'sqlite',
          { port: upstreamPort, issuer: `https://127.0.0.1:${upstreamPort}`, rateLimits: NO_SIGN_IN_LIMIT },
          { transport: 'https' },
        ),
      ]);
    });
    after(async () => {
      await Promise.all([chrome?.close(), op?.close(), upstreamGatehouse?.close()]);
    });

    for (const backend of backends()) {
      describe(backend, () => {
        let server: TestServer;
        let issuer: string;
        let rp: { client: Client; secret: string };
        /** The second Gatehouse's client for this one, as OpenID Provider and as OAuth 2.0 provider. */
        let ghClient: { client: Client; secret: string };

        before(async () => {
          const port = ports.get(backend)!;
          issuer = `https://${host(backend)}`;
          server = await startTestServer(
            backend,
            { port, issuer, rateLimits: NO_SIGN_IN_LIMIT },
            // The upstreams' certificate: both are this process's development certificate.
            { transport: 'https', outboundCa: op.ca },
          );
          const callback = (id: string) => `${issuer}/sign-in/callback/${id}`;
          op.registerClient({
            clientId: `gatehouse-${backend}`,
            clientSecret: OP_SECRET,
            redirectUris: [OP, OP_EMAIL, OP_BAD, OP_ACR].map(({ id }) => callback(id)),
          });
          ghClient = await upstreamGatehouse.client({
            name: `Gatehouse ${backend}`,
            redirect_uris: [callback(GH.id), callback(GH_OAUTH.id)],
            scopes: ['openid', 'profile', 'email'],
          });
          const sealed = (id: string, secret: string) =>
            seal(
              deriveServerKeys(SECRET).identityProviderKey,
              Buffer.from(secret),
              sealContext.clientSecret(id),
            );
          const opProvider = (p: { id: string; name: string }, overrides: Partial<IdentityProvider> = {}) =>
            testProvider({
              ...p,
              issuer: op.issuer,
              clientId: `gatehouse-${backend}`,
              clientAuth: 'client_secret_basic',
              clientSecretSealed: sealed(p.id, OP_SECRET),
              ...overrides,
            });
          const providers: IdentityProvider[] = [
            opProvider(OP),
            opProvider(OP_EMAIL, { linkByVerifiedEmail: true }),
            opProvider(OP_BAD, { clientSecretSealed: sealed(OP_BAD.id, 'not-the-secret') }),
            opProvider(OP_ACR, { requiredAcr: 'urn:gatehouse:test:loa:2' }),
            testProvider({
              ...GH,
              issuer: upstreamGatehouse.gatehouse.config.issuer,
              clientId: ghClient.client.id,
              clientAuth: 'client_secret_basic',
              clientSecretSealed: sealed(GH.id, ghClient.secret),
              // A Gatehouse reports what its sign-in was worth; this one is trusted to say.
              trustUpstreamAssurance: true,
            }),
            testProvider({
              ...GH_OAUTH,
              kind: 'oauth2',
              issuer: null,
              authorizationEndpoint: `${upstreamGatehouse.gatehouse.config.issuer}/authorize`,
              tokenEndpoint: `${upstreamGatehouse.gatehouse.config.issuer}/token`,
              userinfoEndpoint: `${upstreamGatehouse.gatehouse.config.issuer}/v1/users/me`,
              clientId: ghClient.client.id,
              clientAuth: 'client_secret_basic',
              clientSecretSealed: sealed(GH_OAUTH.id, ghClient.secret),
              // /v1/users/me needs `profile`; `email` releases the address.
              scopes: ['profile', 'email'],
              claimMapping: {
                subject: 'id',
                username: 'username',
                email: 'email',
                emailVerified: 'email_verified',
                name: 'name',
              },
            }),
          ];
          for (const provider of providers)
            assert.ok(await server.store.storage.identityProviders.insert(provider));
          rp = await server.client({
            name: 'Relying Party',
            redirect_uris: [CLIENT_REDIRECT],
            scopes: ['openid', 'profile', 'email'],
          });
        });
        after(async () => {
          await server?.close();
        });

        const storage = () => server.store.storage;

        /** A person at node-oidc-provider. */
        function opAccount(claims: { email?: string; emailVerified?: unknown; acr?: string } = {}) {
          const username = fresh(`op-${backend}`);
          op.accounts.set(`sub-${username}`, {
            subject: `sub-${username}`,
            username,
            password: PASSWORD,
            ...claims,
          });
          return { username, subject: `sub-${username}` };
        }

        /** The user the browser is signed in as at the Gatehouse under test, if any. */
        async function signedInAs(context: BrowserContext) {
          const cookie = (await context.cookies(issuer)).find((c) => c.name === BROWSER_COOKIE);
          return server.gatehouse.engine.browserSessions.signedIn(cookie?.value);
        }

        /** Signs in at node-oidc-provider's page; resolves with the Gatehouse callback's response. */
        async function atOp(page: Page, as: { username: string } | 'cancel'): Promise<Response> {
          await page.getByRole('heading', { name: LOGIN_FORM.title }).waitFor();
          const callback = page.waitForResponse((r) => r.url().startsWith(`${issuer}/sign-in/callback/`));
          if (as === 'cancel') {
            await page.getByRole('button', { name: LOGIN_FORM.cancel }).click();
          } else {
            await page.getByLabel(LOGIN_FORM.username).fill(as.username);
            await page.getByLabel(LOGIN_FORM.password).fill(PASSWORD);
            await page.getByRole('button', { name: LOGIN_FORM.submit }).click();
          }
          return callback;
        }

        /** Signs in at the second Gatehouse (its consent given when asked); resolves with the callback's response. */
        async function atGatehouseB(page: Page, username: string): Promise<Response> {
          const callback = page.waitForResponse((r) => r.url().startsWith(`${issuer}/sign-in/callback/`));
          await signIn(page, username, PASSWORD);
          const allow = page.getByRole('button', { name: 'Allow' });
          const landed = await Promise.race([
            callback.then(() => 'callback' as const),
            allow.waitFor().then(() => 'consent' as const),
          ]);
          if (landed === 'consent') await allow.click();
          return callback;
        }

        async function continueWith(page: Page, name: string): Promise<void> {
          await page.getByRole('link', { name: `Continue with ${name}`, exact: true }).click();
        }

        /** The failure page: its status, words and the way back (which keeps `next`). */
        async function expectFailure(page: Page, response: Response, status: number, words: string | RegExp) {
          assert.equal(response.status(), status);
          await page.getByRole('alert').filter({ hasText: words }).waitFor();
          const back = page.getByRole('link', { name: 'Back to sign in' });
          assert.match((await back.getAttribute('href')) ?? '', /^\/sign-in\?next=/);
          assert.equal(await signedInAs(page.context()), undefined, 'never signed in by a failure');
        }

        /** The relying party's code flow at this Gatehouse, ending in its ID token's claims. */
        async function relyingPartyIdToken(page: Page, start: (url: string) => Promise<void>) {
          const pkce = pkcePair();
          const url = `${issuer}/authorize?${new URLSearchParams({
            response_type: 'code',
            client_id: rp.client.id,
            redirect_uri: CLIENT_REDIRECT,
            scope: 'openid profile',
            state: 'rp-state',
            nonce: 'rp-nonce',
            code_challenge: pkce.challenge,
            code_challenge_method: 'S256',
          })}`;
          await start(url);
          const allow = page.getByRole('button', { name: 'Allow' });
          const landed = await Promise.race([
            landedAtClient(page).then(() => 'client' as const),
            allow.waitFor().then(() => 'consent' as const),
          ]);
          if (landed === 'consent') await allow.click();
          const code = (await landedAtClient(page)).searchParams.get('code');
          assert.ok(code);
          const res = await server.http.token(
            {
              grant_type: 'authorization_code',
              code,
              redirect_uri: CLIENT_REDIRECT,
              code_verifier: pkce.verifier,
            },
            { id: rp.client.id, secret: rp.secret },
          );
          assert.equal(res.status, 200, res.text);
          return decodeJwt((JSON.parse(res.text) as { id_token: string }).id_token);
        }

        it('a first sign-in creates a user, whose own sub and amr fed the relying party gets; the next one (idp_hint) reuses the link', async () => {
          const person = opAccount({ email: 'newcomer@op.example', emailVerified: true });
          const first = await clientContext(chrome);
          const claims = await relyingPartyIdToken(first.page, async (url) => {
            await first.page.goto(url);
            await continueWith(first.page, OP.name);
            assert.equal((await atOp(first.page, person)).status(), 303);
          });
          const user = await storage().users.getByUsername(person.username);
          assert.ok(user, 'a user was made from the upstream claims');
          assert.equal(user.passwordHash, '', 'with no password');
          assert.equal(user.email, 'newcomer@op.example');
          assert.equal(user.emailVerified, false, 'not trusted to link by address: verified here by mail');
          assert.equal(claims.sub, user.id, 'the local sub, not the upstream one');
          assert.notEqual(claims.sub, person.subject);
          assert.deepEqual(claims.amr, ['fed']);
          const links = await storage().federatedLinks.listByUser(user.id);
          assert.deepEqual(
            links.map((link) => [link.providerId, link.issuer, link.subject]),
            [[OP.id, op.issuer, person.subject]],
          );
          await first.context.close();

          // Again, in another browser, straight to the provider with idp_hint: the same user, no new one.
          const users = (await storage().users.list(1000, 0)).total;
          const second = await clientContext(chrome);
          const again = await relyingPartyIdToken(second.page, async (url) => {
            await second.page.goto(`${url}&idp_hint=${OP.id}`);
            assert.equal((await atOp(second.page, person)).status(), 303);
          });
          assert.equal(again.sub, user.id);
          assert.equal((await storage().users.list(1000, 0)).total, users);
          assert.equal((await storage().federatedLinks.listByUser(user.id)).length, 1);
          await second.context.close();
        });

        it('a second Gatehouse as OpenID Provider, trusted for its amr: amr fed and pwd; as OAuth 2.0 provider through /v1/users/me', async () => {
          const { user: bUser } = await upstreamGatehouse.user(fresh(`b-${backend}`), PASSWORD, {
            email: 'bee@b.example',
          });
          const { context, page } = await clientContext(chrome);
          const claims = await relyingPartyIdToken(page, async (url) => {
            await page.goto(url);
            await continueWith(page, GH.name);
            assert.equal((await atGatehouseB(page, bUser.username)).status(), 303);
          });
          assert.deepEqual(claims.amr, ['fed', 'pwd']);
          const user = await storage().users.getByUsername(bUser.username);
          assert.equal(claims.sub, user?.id);
          await context.close();

          // The same person through the plain OAuth 2.0 provider: its own link issuer, subject = B's id.
          const { user: cUser } = await upstreamGatehouse.user(fresh(`c-${backend}`), PASSWORD, {
            email: 'sea@b.example',
          });
          const other = await clientContext(chrome);
          await other.page.goto(`${issuer}/sign-in?next=/account/security`);
          await continueWith(other.page, GH_OAUTH.name);
          assert.equal((await atGatehouseB(other.page, cUser.username)).status(), 303);
          await other.page.getByRole('heading', { name: 'Linked accounts' }).waitFor();
          const made = await storage().users.getByUsername(cUser.username);
          assert.ok(made);
          assert.equal(made.email, 'sea@b.example');
          assert.equal((await signedInAs(other.context))?.user.id, made.id);
          const link = await storage().federatedLinks.find(`urn:gatehouse:idp:${GH_OAUTH.id}`, cUser.id);
          assert.equal(link?.userId, made.id);
          await other.context.close();
        });

        it('linking by a verified address: on, at once; off, only after the password; an unverified address never', async () => {
          const verifiedLocal = async (email: string) => {
            const { user } = await server.user(fresh(`local-${backend}`), PASSWORD, { email });
            assert.ok(await storage().users.markEmailVerified(user.id, email));
            return user;
          };

          // On: both sides verified, linked at once.
          const vera = await verifiedLocal('vera@example.com');
          const veraOp = opAccount({ email: 'vera@example.com', emailVerified: true });
          const on = await clientContext(chrome);
          await on.page.goto(`${issuer}/sign-in?next=/account/security`);
          await continueWith(on.page, OP_EMAIL.name);
          assert.equal((await atOp(on.page, veraOp)).status(), 303);
          await on.page.getByRole('heading', { name: 'Linked accounts' }).waitFor();
          assert.equal((await signedInAs(on.context))?.user.id, vera.id);
          assert.equal((await storage().federatedLinks.find(op.issuer, veraOp.subject))?.userId, vera.id);
          await on.context.close();

          // Off: the same situation asks for the local password first; the link is made after it.
          const otto = await verifiedLocal('otto@example.com');
          const ottoOp = opAccount({ email: 'otto@example.com', emailVerified: true });
          const off = await clientContext(chrome);
          await off.page.goto(`${issuer}/sign-in?next=/account/security`);
          await continueWith(off.page, OP.name);
          assert.equal((await atOp(off.page, ottoOp)).status(), 303);
          await off.page.getByText('An account with this email already exists').waitFor();
          assert.equal(await signedInAs(off.context), undefined);
          assert.equal(await storage().federatedLinks.find(op.issuer, ottoOp.subject), undefined);
          await signIn(off.page, otto.username, PASSWORD);
          await off.page
            .getByRole('status')
            .filter({ hasText: `${OP.name} linked` })
            .waitFor();
          assert.equal((await storage().federatedLinks.find(op.issuer, ottoOp.subject))?.userId, otto.id);
          await off.context.close();
          // From then on the provider alone signs otto in.
          const later = await clientContext(chrome);
          await later.page.goto(`${issuer}/sign-in?next=/account/security`);
          await continueWith(later.page, OP.name);
          await atOp(later.page, ottoOp);
          await later.page.getByRole('heading', { name: 'Linked accounts' }).waitFor();
          assert.equal((await signedInAs(later.context))?.user.id, otto.id);
          await later.context.close();

          // Unverified upstream address, provider linking by address: never linked; the password is asked.
          const una = await verifiedLocal('una@example.com');
          const unaOp = opAccount({ email: 'una@example.com', emailVerified: 'true' });
          const never = await clientContext(chrome);
          await never.page.goto(`${issuer}/sign-in?next=/account/security`);
          await continueWith(never.page, OP_EMAIL.name);
          assert.equal((await atOp(never.page, unaOp)).status(), 303);
          await never.page.getByText('An account with this email already exists').waitFor();
          assert.equal(await signedInAs(never.context), undefined);
          assert.equal(await storage().federatedLinks.find(op.issuer, unaOp.subject), undefined);
          // "Don't link it": the notice goes; signing in then links nothing.
          await never.page.getByRole('button', { name: "Don't link it" }).click();
          await never.page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
          assert.equal(await never.page.getByText('An account with this email already exists').count(), 0);
          await signIn(never.page, una.username, PASSWORD);
          await never.page.getByRole('heading', { name: 'Linked accounts' }).waitFor();
          assert.equal(await storage().federatedLinks.find(op.issuer, unaOp.subject), undefined);
          assert.equal(await storage().users.getByUsername(unaOp.username), undefined, 'nobody created');
          await never.context.close();
        });

        it('the security page lists links, links another, refuses to remove the last way in; a linked provider confirms it is you', async () => {
          const person = opAccount({ email: `${fresh('solo')}@op.example` });
          const { context, page } = await clientContext(chrome);
          await page.goto(`${issuer}/sign-in?next=/account/security`);
          await continueWith(page, OP.name);
          await atOp(page, person);
          const section = page.locator('section', {
            has: page.getByRole('heading', { name: 'Linked accounts' }),
          });
          await section.getByRole('heading', { name: OP.name, exact: true }).waitFor();
          await section.getByText(person.username, { exact: true }).waitFor();
          await page.getByRole('button', { name: 'Set a password' }).waitFor();
          assert.equal(await page.getByRole('button', { name: 'Change password' }).count(), 0);

          // The only link, and no password: refused, and said why.
          const refused = page.waitForResponse((r) => r.url().endsWith('/linked-accounts/remove'));
          await section.getByRole('button', { name: 'Remove' }).click();
          assert.equal((await refused).status(), 409);
          await page.getByRole('alert').filter({ hasText: 'only way to sign in' }).waitFor();
          const user = (await signedInAs(context))!.user;
          assert.equal((await storage().federatedLinks.listByUser(user.id)).length, 1);

          // "Link Gatehouse B": the second Gatehouse asks who it is, then the link is listed.
          const { user: bUser } = await upstreamGatehouse.user(fresh(`lb-${backend}`), PASSWORD);
          await section.getByRole('link', { name: `Link ${GH.name}`, exact: true }).click();
          assert.equal((await atGatehouseB(page, bUser.username)).status(), 303);
          await page
            .getByRole('status')
            .filter({ hasText: `${GH.name} linked` })
            .waitFor();
          assert.equal((await storage().federatedLinks.listByUser(user.id)).length, 2);

          // Now the first may go.
          await section
            .locator('li', { has: page.getByRole('heading', { name: OP.name, exact: true }) })
            .getByRole('button', { name: 'Remove' })
            .click();
          await page.getByRole('status').filter({ hasText: 'Linked account removed' }).waitFor();
          const left = await storage().federatedLinks.listByUser(user.id);
          assert.deepEqual(
            left.map((link) => link.providerId),
            [GH.id],
          );

          // "Confirm it's you" offers the linked provider (and only it), which confirms it at the upstream
          // (prompt=login, max_age=0): the same session, its sign-in now the second Gatehouse's.
          const before = (await signedInAs(context))!.authentication;
          assert.deepEqual(before.amr, ['fed']);
          // The second Gatehouse's clock in step with this one's: its auth_time is checked against max_age=0.
          upstreamGatehouse.clock.advance(server.clock.now() - upstreamGatehouse.clock.now());
          await page.goto(`${issuer}/sign-in?reauth=1&next=/account/security`);
          await page.getByRole('heading', { name: "Confirm it's you" }).waitFor();
          assert.equal(
            await page.getByRole('link', { name: `Continue with ${OP.name}`, exact: true }).count(),
            0,
          );
          await continueWith(page, GH.name);
          assert.equal((await atGatehouseB(page, bUser.username)).status(), 303);
          await section.getByRole('heading', { name: GH.name, exact: true }).waitFor();
          const after = (await signedInAs(context))!.authentication;
          assert.equal(after.sid, before.sid, 'the same session');
          assert.deepEqual(after.amr, ['fed', 'pwd']);
          await context.close();
        });

        it('a user with an authenticator app gives its code after the upstream sign-in: fed, otp, mfa', async () => {
          const person = opAccount();
          const first = await clientContext(chrome);
          await first.page.goto(`${issuer}/sign-in?next=/account/security`);
          await continueWith(first.page, OP.name);
          await atOp(first.page, person);
          await first.page.getByRole('heading', { name: 'Linked accounts' }).waitFor();
          await first.context.close();
          const user = (await storage().users.getByUsername(person.username))!;
          const { engine } = server.gatehouse;
          const setUp = await engine.secondFactors.beginTotp(user);
          assert.ok(setUp);
          const confirmed = await engine.confirmTotpSetUp({
            userId: user.id,
            code: appCode(setUp.secret, server.clock.now()),
            address: '203.0.113.9',
          });
          assert.equal(confirmed.outcome, 'signed-in');

          const { context, page } = await clientContext(chrome);
          await page.goto(`${issuer}/sign-in?next=/account/security`);
          await continueWith(page, OP.name);
          await atOp(page, person);
          await page.getByRole('heading', { name: 'Enter a code' }).waitFor();
          assert.equal(await signedInAs(context), undefined, 'not signed in before the code');
          server.clock.advance(30);
          await page.getByLabel('Code', { exact: true }).fill(appCode(setUp.secret, server.clock.now()));
          await page.getByRole('button', { name: 'Verify' }).click();
          await page.getByRole('heading', { name: 'Linked accounts' }).waitFor();
          const signedIn = await signedInAs(context);
          assert.equal(signedIn?.user.id, user.id);
          assert.deepEqual(signedIn?.authentication.amr, ['fed', 'otp', 'mfa']);
          await context.close();
        });

        it('failures: cancelled, an upstream error, an acr not delivered, a disabled user: each a page, never signed in', async () => {
          const next = '/account/security';
          /** A fresh browser (no session at the upstream either) through `provider`, answered as `as`. */
          async function through(
            provider: { name: string },
            as: { username: string } | 'cancel',
            status: number,
            words: string | RegExp,
          ): Promise<void> {
            const { context, page } = await clientContext(chrome);
            await page.goto(`${issuer}/sign-in?next=${next}`);
            await continueWith(page, provider.name);
            await expectFailure(page, await atOp(page, as), status, words);
            await context.close();
          }

          await through(OP, 'cancel', 403, `The sign-in at ${OP.name} was cancelled.`);
          // The token endpoint refuses this provider's client secret.
          await through(
            OP_BAD,
            opAccount(),
            502,
            new RegExp(`${OP_BAD.name} answered with an error \\(\\w+\\)`),
          );
          const weak = opAccount({ acr: 'urn:gatehouse:test:loa:1' });
          await through(OP_ACR, weak, 403, `${OP_ACR.name} did not confirm the sign-in as strongly`);
          assert.equal(await storage().users.getByUsername(weak.username), undefined);

          const person = opAccount();
          const { context, page } = await clientContext(chrome);
          await page.goto(`${issuer}/sign-in?next=${next}`);
          await continueWith(page, OP.name);
          await atOp(page, person);
          await page.getByRole('heading', { name: 'Linked accounts' }).waitFor();
          const user = (await storage().users.getByUsername(person.username))!;
          await context.close();
          await server.gatehouse.engine.users.update(user, { disabled: true });
          await through(OP, person, 403, 'This account is disabled');
        });

        it('a replayed callback, a mixed-up issuer and an expired state: each a page, never signed in', async () => {
          const person = opAccount();
          const { context, page } = await clientContext(chrome);
          // The callback as the browser reached it (a redirect: seen, not routed), and the cookies it carried.
          let callbackUrl: string | undefined;
          page.on('request', (request) => {
            if (request.url().startsWith(`${issuer}/sign-in/callback/`)) callbackUrl = request.url();
          });
          await page.goto(`${issuer}/sign-in?next=/account/security`);
          await continueWith(page, OP.name);
          await page.getByRole('heading', { name: LOGIN_FORM.title }).waitFor();
          const cookies = await context.cookies(issuer);
          assert.equal((await atOp(page, person)).status(), 303);
          await page.getByRole('heading', { name: 'Linked accounts' }).waitFor();
          assert.ok(callbackUrl);
          const replay = callbackUrl;
          await context.close();

          // Replayed in another browser holding a copy of the same cookies: the state was spent.
          const thief = await clientContext(chrome);
          await thief.context.addCookies(cookies);
          const replayed = thief.page.waitForResponse((r) => r.url() === replay);
          await thief.page.goto(replay);
          await expectFailure(
            thief.page,
            await replayed,
            400,
            'This sign-in link has expired or was already used. Start again.',
          );
          // And without them.
          const stranger = await clientContext(chrome);
          const bare = stranger.page.waitForResponse((r) => r.url() === replay);
          await stranger.page.goto(replay);
          await expectFailure(stranger.page, await bare, 400, 'expired or was already used');
          await Promise.all([thief.context.close(), stranger.context.close()]);

          /** Starts a sign-in through node-oidc-provider; the `state` it sent there. */
          async function startAtOp(at: Page): Promise<string> {
            const sent = at.waitForRequest((r) => r.url().startsWith(`${op.issuer}/auth?`));
            await at.goto(`${issuer}/sign-in?next=/account/security`);
            await continueWith(at, OP.name);
            const state = new URL((await sent).url()).searchParams.get('state');
            assert.ok(state);
            await at.getByRole('heading', { name: LOGIN_FORM.title }).waitFor();
            return state;
          }
          const mixed = await clientContext(chrome);
          // A mix-up (RFC 9207): an answer to this browser's flow that names the second Gatehouse as its issuer.
          let state = await startAtOp(mixed.page);
          let answer = `${issuer}/sign-in/callback/${OP.id}?${new URLSearchParams({
            code: 'a-code-from-elsewhere',
            state,
            iss: upstreamGatehouse.gatehouse.config.issuer,
          })}`;
          let response = mixed.page.waitForResponse((r) => r.url() === answer);
          await mixed.page.goto(answer);
          await expectFailure(mixed.page, await response, 502, /did not check out: it names another issuer/);
          // And an answer arriving at another provider's callback than the flow was started with.
          state = await startAtOp(mixed.page);
          answer = `${issuer}/sign-in/callback/${GH.id}?${new URLSearchParams({ code: 'c', state })}`;
          response = mixed.page.waitForResponse((r) => r.url() === answer);
          await mixed.page.goto(answer);
          await expectFailure(mixed.page, await response, 502, /did not check out: it names another issuer/);
          await mixed.context.close();

          // Expired: the person took longer at the upstream than the state lasts.
          const slow = await clientContext(chrome);
          await slow.page.goto(`${issuer}/sign-in?next=/account/security`);
          await continueWith(slow.page, OP.name);
          await slow.page.getByRole('heading', { name: LOGIN_FORM.title }).waitFor();
          server.clock.advance(UPSTREAM_STATE_SECONDS + 1);
          await expectFailure(slow.page, await atOp(slow.page, person), 400, 'expired or was already used');
          await slow.context.close();
        });
      });
    }
  },
);
