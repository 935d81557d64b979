import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { pageProblems } from '../helpers/admin-console.js';
import { introspect, type TokenBody } from '../helpers/api-requests.js';
import { backends } from '../helpers/backends.js';
import { browserSkip, launchChromiumPerBackend, signIn } from '../helpers/browser-pages.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.js';
import { appCode } from '../helpers/totp.js';

// Issue 30 points 2 and 6 for people (decision 42): a user's security and grants, as an operator
// handles them in the console. Screenshots of each page go to SHOTS.
const SHOTS = mkdtempSync(join(tmpdir(), 'gatehouse-admin-people-'));
const FIREFOX_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0';

describe('people in the admin console, in Chromium (decision 42)', { skip: browserSkip }, () => {
  let chrome: Awaited<ReturnType<typeof launchChromiumPerBackend>>;

  before(async () => {
    chrome = await launchChromiumPerBackend('people', backends());
  });
  after(async () => {
    await chrome?.close();
  });

  for (const backend of backends()) {
    describe(backend, () => {
      let server: TestServer;
      let smtp: TestSmtpServer;
      let issuer: string;
      let context: BrowserContext | undefined;

      before(async () => {
        const port = chrome.port(backend);
        issuer = chrome.issuer(backend);
        smtp = await startSmtpServer();
        server = await startTestServer(backend, { port, issuer, smtpUrl: smtp.url }, { transport: 'https' });
      });
      after(async () => {
        await context?.close();
        await server?.close();
        await smtp?.close();
      });

      const shot = (page: Page, name: string) =>
        page.screenshot({ path: join(SHOTS, `${backend}-${name}.png`), fullPage: true });

      it('an administrator revokes a grant (its token inactive), resets second factors, mails a reset link and signs a session out; each is in the audit log', async () => {
        const { user: admin, password: adminPassword } = await server.user();
        await server.gatehouse.engine.users.update(admin, { admin: true });
        const { user } = await server.user('dana-people');
        const { engine } = server.gatehouse;

        // Dana's grant to an app, and an access token under it (the code of a consent, redeemed at /token).
        const app = await server.client({
          name: 'Photo album',
          redirect_uris: ['https://album.example/cb'],
          grant_types: ['authorization_code', 'refresh_token'],
          scopes: ['openid', 'profile'],
        });
        const { code, grant } = await server.seedCode({ client: app.client, user, scope: ['profile'] });
        const token = (
          await server.http.token(
            { grant_type: 'authorization_code', code, redirect_uri: 'https://album.example/cb' },
            { id: app.client.id, secret: app.secret },
          )
        ).json as TokenBody;
        const active = async () =>
          (
            (
              await introspect(
                server,
                { id: app.client.id, secret: app.secret },
                { token: token.access_token },
              )
            ).json as { active: boolean }
          ).active;
        assert.equal(await active(), true);
        // Two browser sessions, an authenticator app and recovery codes.
        await engine.browserSessions.start(
          user.id,
          { method: 'password', at: server.clock.now() },
          { userAgent: FIREFOX_MAC, address: '198.51.100.7' },
        );
        await engine.browserSessions.start(user.id, { method: 'password', at: server.clock.now() });
        const app2fa = await engine.secondFactors.beginTotp(user);
        assert.ok(app2fa);
        const confirmed = await engine.confirmTotpSetUp({
          userId: user.id,
          code: appCode(app2fa.secret, server.clock.now()),
          address: '198.51.100.7',
        });
        assert.equal(confirmed.outcome, 'signed-in');
        await engine.secondFactors.generateRecoveryCodes(user.id);

        context = await chrome.browser.newContext({
          ignoreHTTPSErrors: true,
          viewport: { width: 1280, height: 900 },
        });
        const page = await context.newPage();
        const userPath = `${issuer}/admin/users/${user.id}`;
        await page.goto(userPath);
        await signIn(page, admin.username, adminPassword);
        await page.getByRole('heading', { name: user.username, level: 1 }).waitFor();
        const sessions = page
          .getByRole('row')
          .filter({ has: page.getByRole('button', { name: 'Sign out' }) });
        assert.equal(await sessions.count(), 2);
        assert.equal(
          await page
            .getByRole('row')
            .filter({ hasText: 'Firefox on macOS' })
            .filter({ hasText: '198.51.100.7' })
            .count(),
          1,
        );
        assert.equal(
          await page
            .getByRole('row')
            .filter({ hasText: 'Photo album' })
            .filter({ hasText: 'profile' })
            .count(),
          1,
        );
        assert.deepEqual(await pageProblems(page), []);
        await shot(page, 'user');

        // The Grants section: found by the client's id, "Revoke…", the confirmation, and the token is inactive.
        await page
          .getByRole('navigation', { name: 'Admin console' })
          .getByRole('link', { name: 'Grants' })
          .click();
        await page.getByRole('heading', { name: 'Grants', level: 1 }).waitFor();
        await page.getByLabel('or client ID').fill(app.client.id);
        await page.getByRole('button', { name: 'Find grants' }).click();
        const row = page.getByRole('row').filter({ hasText: user.username });
        await row.waitFor();
        assert.deepEqual(await pageProblems(page), []);
        await shot(page, 'grants');
        await row.getByRole('link', { name: /Revoke/ }).click();
        await page.getByRole('heading', { name: /^Revoke Photo album’s grant/, level: 1 }).waitFor();
        assert.equal(await active(), true, 'nothing revoked before the confirmation');
        assert.deepEqual(await pageProblems(page), []);
        await shot(page, 'revoke-grant');
        await page.getByRole('button', { name: 'Revoke grant' }).click();
        await page.getByRole('status').filter({ hasText: 'The grant was revoked' }).waitFor();
        assert.equal(new URL(page.url()).searchParams.get('client_id'), app.client.id, 'back to the list');
        assert.equal(await active(), false, 'the access token under the grant is inactive at /introspect');
        assert.equal(
          (await engine.grants.standingOfUser(user.id)).some((g) => g.id === grant.id),
          false,
        );

        // Second factors: the confirmation says what goes and what stays.
        await page.goto(userPath);
        await page.getByRole('link', { name: 'Reset second factors…' }).click();
        await page
          .getByRole('heading', { name: /^Reset dana-people’s second factors\?/, level: 1 })
          .waitFor();
        assert.match(
          await page.locator('main .caution:not([role=note])').innerText(),
          /authenticator app and their 10 unused recovery codes/,
        );
        assert.deepEqual(await pageProblems(page), []);
        await shot(page, 'reset-second-factors');
        await page.getByRole('button', { name: 'Reset second factors' }).click();
        await page
          .getByRole('status')
          .filter({ hasText: 'authenticator app and recovery codes were removed' })
          .waitFor();
        assert.deepEqual(await engine.secondFactors.status(user.id), { totp: false, recoveryCodesLeft: 0 });

        // Reset password: Dana has no address, so the console asks for one, then mails the link.
        await page.getByLabel('Email for the link').fill('not an address');
        await page.getByRole('button', { name: 'Save email and send link' }).click();
        await page.locator('#field-reset_email-error').waitFor();
        assert.equal(await page.getByLabel('Email for the link').getAttribute('aria-invalid'), 'true');
        assert.equal(smtp.mails.length, 0);
        await shot(page, 'reset-link-error');
        await page.getByLabel('Email for the link').fill('dana@example.com');
        await page.getByRole('button', { name: 'Save email and send link' }).click();
        await page
          .getByRole('status')
          .filter({ hasText: 'A link to choose a new password is on its way' })
          .waitFor();
        const mail = await smtp.mail(0);
        assert.match(mail.text ?? '', new RegExp(`${issuer}/password-reset\\?token=\\S+`));
        assert.match(mail.text ?? '', /dana-people/);

        // Sessions: sign one out, then everywhere.
        await sessions.first().getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('status').filter({ hasText: 'signed out of that session' }).waitFor();
        assert.equal(await sessions.count(), 1);
        await page.getByRole('button', { name: 'Sign out everywhere' }).click();
        await page.getByRole('status').filter({ hasText: 'signed out everywhere' }).waitFor();
        assert.equal(await engine.browserSessions.count(user.id), 0);
        await page.getByText('Not signed in anywhere.').waitFor();

        // At 375 px: the user's page and the grants list fit, every control labelled.
        await page.setViewportSize({ width: 375, height: 800 });
        for (const path of [
          `/admin/users/${user.id}`,
          `/admin/grants?username=${user.username}`,
          '/admin/grants',
        ]) {
          await page.goto(`${issuer}${path}`);
          await page.getByRole('heading', { level: 1 }).waitFor();
          assert.deepEqual(await pageProblems(page), [], path);
        }
        await shot(page, 'grants-375');

        // The audit log: each change by this administrator, from the browser's address.
        await page.setViewportSize({ width: 1280, height: 900 });
        await page.goto(`${issuer}/admin/audit`);
        const by = `user ${admin.id}`;
        const event = (type: string) =>
          page
            .getByRole('row')
            .filter({ hasText: type })
            .filter({ hasText: by })
            .filter({ hasText: `user ${user.id}` });
        for (const type of [
          'grant.revoked',
          'second-factor.reset',
          'password.reset-link-sent',
          'session.ended',
          'user.updated',
        ]) {
          assert.ok((await event(type).count()) >= 1, type);
        }
        assert.equal(
          await event('grant.revoked').filter({ hasText: '127.0.0.1' }).count(),
          1,
          'the browser’s address',
        );
        assert.deepEqual(await pageProblems(page), []);
        await shot(page, 'audit');
      });
    });
  }
});
