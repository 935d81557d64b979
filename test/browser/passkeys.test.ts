import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { decodeJwt } from 'jose';
import type { User } from '../../src/core/model.js';
import { BROWSER_COOKIE } from '../../src/http/ui/browser-context.js';
import { backends } from '../helpers/backends.js';
import {
  browserSkip,
  CLIENT_REDIRECT,
  expectConsentPage,
  landedAtClient,
  launchChromium,
  pkcePair,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { appCode } from '../helpers/totp.js';

/**
 * Passkeys as people use them (docs/decisions.md, decision 33), in Chromium with its virtual
 * authenticator (DevTools protocol, WebAuthn domain): added on the security page, used to sign in
 * with no user name, removed; a cloned credential and an unverified user refused. The pages are opened
 * at the issuer's own host (gatehouse.test, the relying-party id), whose development certificate
 * Chromium is told to trust by its key: WebAuthn refuses a page with a certificate error.
 */
const ISSUER = 'https://gatehouse.test';

interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId: string;
  privateKey: string;
  userHandle: string;
  signCount: number;
}

/**
 * A page with a virtual platform authenticator (CTAP2, internal, resident keys, user verification).
 * The virtual authenticator answers a conditional request (autofill) at once, as a person picking the
 * passkey from the list would; `autofill: false` plays a browser without conditional mediation, so
 * the sign-in page waits for its button.
 */
async function pageWithAuthenticator(
  browser: TestBrowser,
  { autofill = false, client = false } = {},
): Promise<{ context: BrowserContext; page: Page; cdp: CDPSession; authenticatorId: string }> {
  // `client`: the flow ends at the client stub (client.test), whose certificate is not the issuer's.
  const context = await browser.browser.newContext({
    viewport: { width: 1280, height: 900 },
    ...(client ? { ignoreHTTPSErrors: true } : {}),
  });
  if (!autofill) {
    await context.addInitScript(() => {
      PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);
    });
  }
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const authenticatorId = await addAuthenticator(cdp);
  return { context, page, cdp, authenticatorId };
}

async function addAuthenticator(cdp: CDPSession): Promise<string> {
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return authenticatorId;
}

async function credentials(cdp: CDPSession, authenticatorId: string): Promise<VirtualCredential[]> {
  const { credentials: found } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  return found as VirtualCredential[];
}

async function signInWithPassword(page: Page, username: string, password: string): Promise<void> {
  await page.goto(`${ISSUER}/sign-in?next=/account/security`);
  await signIn(page, username, password);
  await page.getByRole('heading', { level: 1, name: 'Security' }).waitFor();
}

async function addPasskey(page: Page, name: string): Promise<void> {
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByRole('status').filter({ hasText: 'Passkey added' }).waitFor();
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();

  await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
}

for (const backend of backends()) {
  describe(`passkeys in Chromium (${backend})`, { skip: browserSkip }, () => {
    let server: TestServer;
    let browser: TestBrowser;

    before(async () => {
      server = await startTestServer(backend, {}, { transport: 'https' });
      const spki = createHash('sha256')
        .update(new X509Certificate(server.ca).publicKey.export({ type: 'spki', format: 'der' }))
        .digest('base64');
      browser = await launchChromium({ 'gatehouse.test': Number(new URL(server.url).port) }, [
        `--ignore-certificate-errors-spki-list=${spki}`,
      ]);
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    /** What the browser's session says of its sign-in (the cookie read from the browser). */
    async function sessionOf(context: BrowserContext) {
      const cookie = (await context.cookies(ISSUER)).find((c) => c.name === BROWSER_COOKIE);
      return server.gatehouse.engine.browserSessions.authentication(cookie?.value);
    }

    /** Gives `user` a confirmed authenticator app through the engine (decision 34). */
    async function withApp(found: User): Promise<void> {
      const { engine } = server.gatehouse;
      const setUp = await engine.secondFactors.beginTotp(found);
      assert.ok(setUp);
      const code = appCode(setUp.secret, server.clock.now());
      const result = await engine.confirmTotpSetUp({ userId: found.id, code, address: '203.0.113.9' });
      assert.equal(result.outcome, 'signed-in');
    }

    /** An authorization code request for `clientId` at the issuer's host, with PKCE. */
    function authorization(clientId: string, extra: Record<string, string> = {}) {
      const pkce = pkcePair();
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: CLIENT_REDIRECT,
        scope: 'openid read',
        nonce: 'n1',
        state: 's1',
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
        ...extra,
      });
      return { url: `${ISSUER}/authorize?${query.toString()}`, verifier: pkce.verifier };
    }

    /** Allows on the consent page, exchanges the code, and returns the ID token's claims. */
    async function allowAndTakeIdToken(
      page: Page,
      client: { id: string; secret: string },
      verifier: string,
    ): Promise<Record<string, unknown>> {
      await page.getByRole('button', { name: 'Allow' }).click();
      const code = (await landedAtClient(page)).searchParams.get('code') ?? '';
      const res = await server.http.token(
        { grant_type: 'authorization_code', code, redirect_uri: CLIENT_REDIRECT, code_verifier: verifier },
        client,
      );
      assert.equal(res.status, 200, res.text);
      return decodeJwt((res.json as { id_token: string }).id_token);
    }

    it('is the second factor after a password: "Use a passkey" on the code page', async () => {
      const { user, password } = await server.user();
      const { context, page } = await pageWithAuthenticator(browser);
      await signInWithPassword(page, user.username, password);
      await addPasskey(page, 'Laptop');
      await withApp(user);
      await signOut(page);

      await page.goto(`${ISSUER}/sign-in?next=/account/security`);
      await signIn(page, user.username, password);
      await page.getByRole('heading', { level: 1, name: 'Enter a code' }).waitFor();
      assert.equal(await sessionOf(context), undefined, 'not signed in after the password');
      await page.getByRole('button', { name: 'Use a passkey' }).click();
      await page.getByRole('heading', { level: 1, name: 'Security' }).waitFor();
      const signedIn = await sessionOf(context);
      assert.equal(signedIn?.userId, user.id);
      // The password, then the passkey's values (decision 33); phishing-resistant.
      assert.deepEqual(signedIn?.amr, ['pwd', 'hwk', 'user', 'mfa']);
      assert.equal(signedIn?.acr, 'phr');
      await context.close();
    });

    it('asks a user with only a passkey for it after the password when the client requires two factors', async () => {
      const { client, secret } = await server.client({
        name: 'Payroll',
        redirect_uris: [CLIENT_REDIRECT],
        scopes: ['openid', 'read'],
        require_mfa: true,
      });
      const { user, password } = await server.user();
      const { context, page } = await pageWithAuthenticator(browser, { client: true });
      await signInWithPassword(page, user.username, password);
      await addPasskey(page, 'Phone');
      await signOut(page);

      const request = authorization(client.id);
      await page.goto(request.url);
      await signIn(page, user.username, password);
      // Asked for the passkey: not led to set up an authenticator app, and no code it cannot have.
      await page.getByRole('heading', { level: 1, name: 'Use a passkey' }).waitFor();
      assert.equal(await page.getByRole('heading', { name: 'Set up an authenticator app' }).count(), 0);
      assert.equal(await page.getByLabel('Code', { exact: true }).count(), 0);
      assert.equal(await sessionOf(context), undefined);
      await page.getByRole('button', { name: 'Use a passkey' }).click();
      await expectConsentPage(page, 'Payroll');
      assert.deepEqual((await sessionOf(context))?.amr, ['pwd', 'hwk', 'user', 'mfa']);
      const claims = await allowAndTakeIdToken(page, { id: client.id, secret }, request.verifier);
      assert.deepEqual(claims.amr, ['pwd', 'hwk', 'user', 'mfa']);
      assert.equal(claims.acr, 'phr');
      await context.close();
    });

    it('confirms the signed-in person with one of their own passkeys (reauth=1): the same session, the passkey recorded', async () => {
      const { context, page, cdp, authenticatorId } = await pageWithAuthenticator(browser);
      // Another user's passkey in the same authenticator, which the confirmation must not offer.
      const other = await server.user();
      await signInWithPassword(page, other.user.username, other.password);
      await addPasskey(page, 'Shared laptop');
      await signOut(page);
      const { user, password } = await server.user();
      await signInWithPassword(page, user.username, password);
      await addPasskey(page, 'Laptop');
      assert.equal((await credentials(cdp, authenticatorId)).length, 2);
      const before = await sessionOf(context);
      const cookieBefore = (await context.cookies(ISSUER)).find((c) => c.name === BROWSER_COOKIE)?.value;

      // The sign-in is no longer recent: removing the passkey asks who it is first (decision 37).
      server.clock.advance(600);
      const laptop = page.getByRole('listitem').filter({ hasText: 'Laptop' });
      await laptop.getByRole('button', { name: 'Remove' }).click();
      await page.getByRole('heading', { level: 1, name: "Confirm it's you" }).waitFor();
      // What the page's script will be given: only the signed-in user's passkeys (asked here with the
      // browser's own cookies and CSRF token, as the script does).
      const csrf = await page.locator('form[data-passkey] input[name=csrf_token]').getAttribute('value');
      const options = await page.evaluate(async (token) => {
        const response = await fetch('/sign-in/passkey/reauthentication/options', {
          method: 'POST',
          body: new URLSearchParams({ csrf_token: token }),
        });
        return { status: response.status, json: (await response.json()) as unknown };
      }, csrf ?? '');
      assert.equal(options.status, 200);
      const [own] = await server.gatehouse.engine.passkeys.list(user.id);
      const allowed = (options.json as { allowCredentials: { id: string }[] }).allowCredentials;
      assert.deepEqual(
        allowed.map((c) => c.id),
        [own?.id],
        'only the signed-in user’s passkeys',
      );
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByRole('heading', { level: 1, name: 'Security' }).waitFor();

      const after = await sessionOf(context);
      assert.equal(after?.userId, user.id);
      assert.equal(after?.sid, before?.sid, 'the same session');
      assert.equal(after?.authTime, server.clock.now(), 'auth_time moves to the passkey');
      assert.deepEqual(after?.amr, ['pwd', 'hwk', 'user', 'mfa']);
      assert.equal(after?.acr, 'phr');
      const cookieAfter = (await context.cookies(ISSUER)).find((c) => c.name === BROWSER_COOKIE)?.value;
      assert.notEqual(cookieAfter, cookieBefore, 'a renewed cookie');
      // Recent again: the removal goes through.
      await laptop.getByRole('button', { name: 'Remove' }).click();
      await page.getByRole('status').filter({ hasText: 'Passkey removed' }).waitFor();
      await context.close();
    });

    it('steps up to a phishing-resistant sign-in: acr_values=phr after a password puts the passkey first, and the ID token says phr', async () => {
      const { client, secret } = await server.client({
        name: 'Vault',
        redirect_uris: [CLIENT_REDIRECT],
        scopes: ['openid', 'read'],
      });
      const { user, password } = await server.user();
      const { context, page } = await pageWithAuthenticator(browser, { client: true });
      await signInWithPassword(page, user.username, password);
      await addPasskey(page, 'Key');
      const passwordOnly = await sessionOf(context);
      assert.equal(passwordOnly?.acr, 'urn:gatehouse:acr:single-factor');

      const request = authorization(client.id, { acr_values: 'phr' });
      await page.goto(request.url);
      await page.getByText('Vault asks for a stronger sign-in: sign in with a passkey.').waitFor();
      await page.getByText('A passkey works only on this site').waitFor();
      const buttons = await page.getByRole('button').allTextContents();
      assert.ok(
        buttons.indexOf('Sign in with a passkey') < buttons.indexOf('Sign in'),
        `the passkey first: ${buttons.join(', ')}`,
      );
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await expectConsentPage(page, 'Vault');
      const claims = await allowAndTakeIdToken(page, { id: client.id, secret }, request.verifier);
      assert.equal(claims.sub !== undefined, true);
      assert.equal(claims.acr, 'phr');
      assert.deepEqual(claims.amr, ['hwk', 'user', 'mfa']);
      await context.close();
    });

    it('adds a passkey on the security page, signs in with it and no user name, and removes it', async () => {
      const { user, password } = await server.user();
      const { context, page, cdp, authenticatorId } = await pageWithAuthenticator(browser);
      await signInWithPassword(page, user.username, password);
      await page.getByText('You have no passkeys yet.').waitFor();
      await addPasskey(page, 'Work laptop');
      const item = page.getByRole('listitem').filter({ hasText: 'Work laptop' });
      await item.getByText('Never').waitFor();

      // A discoverable credential, for this relying party, with the user's id as its handle.
      const [credential] = await credentials(cdp, authenticatorId);
      assert.equal(credential?.isResidentCredential, true);
      assert.equal(credential?.rpId, 'gatehouse.test');
      assert.equal(Buffer.from(credential?.userHandle ?? '', 'base64').toString(), user.id);
      const [stored] = await server.gatehouse.engine.passkeys.list(user.id);
      assert.equal(stored?.name, 'Work laptop');
      assert.equal(stored?.backupEligible, false);

      await signOut(page);
      assert.equal(
        await page.getByLabel('Username').getAttribute('autocomplete'),
        'username webauthn',
        'the user name field offers passkeys in its autofill',
      );
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByRole('heading', { level: 1, name: 'Connected apps' }).waitFor();
      const signedIn = await sessionOf(context);
      assert.equal(signedIn?.userId, user.id);
      // A device-bound passkey with user verification: hwk, user, two kinds of factor, phishing-resistant.
      assert.deepEqual(signedIn?.amr, ['hwk', 'user', 'mfa']);
      assert.equal(signedIn?.acr, 'phr');
      const [used] = await server.gatehouse.engine.passkeys.list(user.id);
      assert.ok((used?.signCount ?? 0) > 0, 'the counter is kept');
      assert.equal(used?.lastUsedAt, server.clock.now());

      await page.goto(`${ISSUER}/account/security`);
      await page
        .getByRole('listitem')
        .filter({ hasText: 'Work laptop' })
        .getByRole('button', { name: 'Remove' })
        .click();
      await page.getByRole('status').filter({ hasText: 'Passkey removed' }).waitFor();
      await page.getByText('You have no passkeys yet.').waitFor();
      assert.deepEqual(await server.gatehouse.engine.passkeys.list(user.id), []);

      // The authenticator still holds the key, but the server no longer knows it.
      await signOut(page);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByRole('alert').filter({ hasText: 'That passkey could not sign you in.' }).waitFor();
      assert.equal(await sessionOf(context), undefined);
      await context.close();
    });

    it('signs in from the user name field’s autofill (conditional mediation)', async () => {
      const { user, password } = await server.user();
      const { context, page } = await pageWithAuthenticator(browser, { autofill: true });
      await signInWithPassword(page, user.username, password);
      await addPasskey(page, 'Desktop');
      await page.getByRole('button', { name: 'Sign out' }).click();
      // The sign-in page asks for a passkey in the autofill; the virtual authenticator offers its one,
      // and the page signs in with it without a click on "Sign in with a passkey".
      await page.getByRole('heading', { level: 1, name: 'Connected apps' }).waitFor();
      const signedIn = await sessionOf(context);
      assert.equal(signedIn?.userId, user.id);
      assert.deepEqual(signedIn?.amr, ['hwk', 'user', 'mfa']);
      await context.close();
    });

    it('refuses a cloned credential: a second authenticator whose counter is behind', async () => {
      const { user, password } = await server.user();
      const { context, page, cdp, authenticatorId } = await pageWithAuthenticator(browser);
      await signInWithPassword(page, user.username, password);
      await addPasskey(page, 'Phone');
      await signOut(page);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByRole('heading', { level: 1, name: 'Connected apps' }).waitFor();
      const [original] = await credentials(cdp, authenticatorId);
      assert.ok(original !== undefined && original.signCount > 0);

      // The same private key in another authenticator, counting from 0 again.
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
      const cloneId = await addAuthenticator(cdp);
      await cdp.send('WebAuthn.addCredential', {
        authenticatorId: cloneId,
        credential: { ...original, signCount: 0 },
      });
      await signOut(page);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByRole('alert').filter({ hasText: 'That passkey could not sign you in.' }).waitFor();
      assert.equal(await sessionOf(context), undefined);
      const [stored] = await server.gatehouse.engine.passkeys.list(user.id);
      assert.equal(stored?.signCount, original.signCount, 'the clone’s counter is not stored');
      await context.close();
    });

    it('refuses a sign-in whose user was not verified', async () => {
      const { user, password } = await server.user();
      const { context, page, cdp, authenticatorId } = await pageWithAuthenticator(browser);
      await signInWithPassword(page, user.username, password);
      await addPasskey(page, 'Tablet');
      await signOut(page);
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      // User verification is required: the authenticator that cannot verify the user gives no assertion.
      await page.getByRole('alert').filter({ hasText: 'cancelled or timed out' }).waitFor();
      assert.equal(await sessionOf(context), undefined);
      const [stored] = await server.gatehouse.engine.passkeys.list(user.id);
      assert.equal(stored?.lastUsedAt, null);
      await context.close();
    });
  });
}
