import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ParsedMail } from 'mailparser';
import { decodeJwt } from 'jose';
import type { Page } from 'playwright-core';
import type { Client } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { FormBrowser } from '../helpers/form-browser.js';
import {
  browserSkip,
  CLIENT_REDIRECT,
  clientContext,
  landedAtClient,
  launchChromium,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.js';

// Recovery and email verification by mail (issue 28 point 3; docs/decisions.md, decision 35), as a
// person does them: Chromium at the issuer's host, the mail read from a real SMTP server the test
// runs, its link followed in the browser.

const ISSUER = 'https://gatehouse.test';
const NEW_PASSWORD = 'a brand new passphrase';
// Set GATEHOUSE_SCREENSHOTS=<dir> to keep a screenshot of every page at 375 px.
const SCREENSHOTS = process.env.GATEHOUSE_SCREENSHOTS;

/** The link of `path` in a mail's text, whole. */
function linkIn(mail: ParsedMail, path: '/password-reset' | '/email-verification'): string {
  const match = new RegExp(`${ISSUER}${path}\\?token=[A-Za-z0-9_-]{43}`).exec(mail.text ?? '');
  assert.ok(match, `the mail holds a ${path} link:\n${mail.text}`);
  return match[0];
}

describe('Recovery and email verification by mail, in Chromium', { skip: browserSkip }, () => {
  for (const backend of backends()) {
    describe(backend, () => {
      let smtp: TestSmtpServer;
      let server: TestServer;
      let chrome: TestBrowser;
      let rp: Client;
      let rpSecret: string;
      before(async () => {
        smtp = await startSmtpServer();
        server = await startTestServer(
          backend,
          { smtpUrl: smtp.url, mailFrom: 'Gatehouse <no-reply@gatehouse.test>' },
          { transport: 'https' },
        );
        // The links name the issuer's host: Chromium resolves it to the server.
        chrome = await launchChromium({ 'gatehouse.test': Number(new URL(server.url).port) });
        ({ client: rp, secret: rpSecret } = await server.client({
          name: 'Relying Party',
          redirect_uris: [CLIENT_REDIRECT],
          grant_types: ['authorization_code', 'implicit', 'refresh_token'],
          scopes: ['openid', 'email', 'offline_access'],
        }));
      });
      after(async () => {
        await chrome?.close();
        await server?.close();
        await smtp?.close();
      });

      /** An ID token issued alone (Core §5.4: it then carries the email scope's claims). */
      async function idToken(page: Page): Promise<Record<string, unknown>> {
        const nonce = randomUUID();
        const params = new URLSearchParams({
          client_id: rp.id,
          redirect_uri: CLIENT_REDIRECT,
          response_type: 'id_token',
          scope: 'openid email',
          nonce,
        });
        await page.goto(`${ISSUER}/authorize?${params.toString()}`);
        if (await page.getByRole('button', { name: 'Allow' }).isVisible()) {
          await page.getByRole('button', { name: 'Allow' }).click();
        }
        const landed = await landedAtClient(page);
        const claims = decodeJwt(new URLSearchParams(landed.hash.slice(1)).get('id_token') ?? '');
        assert.equal(claims.nonce, nonce);
        return claims;
      }

      it('"Forgot password?": the link mailed over SMTP sets a new password, once, and ends every session and grant', async () => {
        const email = `reset-${randomUUID().slice(0, 8)}@example.com`;
        const { user, password } = await server.user(undefined, undefined, { email });
        // Signed in elsewhere, with a grant and a refresh token: all of it must end.
        const elsewhere = await clientContext(chrome);
        await elsewhere.page.goto(`${ISSUER}/sign-in`);
        await signIn(elsewhere.page, user.username, password);
        await elsewhere.page.waitForURL(`${ISSUER}/account/apps`);
        const { code, grant } = await server.seedCode({
          client: rp,
          user,
          scope: ['openid', 'offline_access'],
        });
        const tokens = await server.http.token(
          { grant_type: 'authorization_code', code, redirect_uri: CLIENT_REDIRECT },
          { id: rp.id, secret: rpSecret },
        );
        assert.equal(tokens.status, 200, tokens.text);
        const refreshToken = (tokens.json as { refresh_token: string }).refresh_token;
        const mailsBefore = smtp.mails.length;

        const { context, page } = await clientContext(chrome);
        await page.goto(`${ISSUER}/sign-in`);
        await page.getByRole('link', { name: 'Forgot password?' }).click();
        await page.getByLabel('Email').fill(email.toUpperCase());
        await page.getByRole('button', { name: 'Send link' }).click();
        await page.getByRole('heading', { name: 'Check your email' }).waitFor();

        const mail = await smtp.mail(mailsBefore);
        assert.equal(mail.to && !Array.isArray(mail.to) ? mail.to.text : undefined, email);
        assert.deepEqual(mail.from?.value, [{ name: 'Gatehouse', address: 'no-reply@gatehouse.test' }]);
        assert.equal(mail.subject, 'Reset your Gatehouse password');
        const link = linkIn(mail, '/password-reset');

        await page.goto(link);
        await page.getByText(`for the account ${user.username}`).waitFor();
        await page.getByLabel('New password').fill(NEW_PASSWORD);
        await page.getByRole('button', { name: 'Set password' }).click();
        await page.getByRole('heading', { name: 'Password set' }).waitFor();

        // Every browser session of the user ended (decision 12): the other browser is signed out.
        await elsewhere.page.goto(`${ISSUER}/account/security`);
        await elsewhere.page.waitForURL((url) => url.pathname === '/sign-in');
        // Every grant revoked: the refresh token no longer works.
        assert.notEqual((await server.store.storage.grants.get(grant.id))?.revokedAt, null);
        const refreshed = await server.http.token(
          { grant_type: 'refresh_token', refresh_token: refreshToken },
          { id: rp.id, secret: rpSecret },
        );
        assert.equal(refreshed.status, 400, refreshed.text);
        assert.equal((refreshed.json as { error: string }).error, 'invalid_grant');

        // The new password signs in; the old one does not.
        await page.getByRole('link', { name: 'Sign in with your new password' }).click();
        await signIn(page, user.username, password);
        await page.getByText('Wrong user name or password.').waitFor();
        await signIn(page, user.username, NEW_PASSWORD);
        await page.waitForURL(`${ISSUER}/account/apps`);

        // The link worked once.
        const again = await page.goto(link);
        assert.equal(again?.status(), 410);
        await page.getByRole('heading', { name: 'This link was used already' }).waitFor();
        await context.close();
        await elsewhere.context.close();
      });

      it('answers an address no account has with the same page, and sends nothing', async () => {
        const known = `known-${randomUUID().slice(0, 8)}@example.com`;
        await server.user(undefined, undefined, { email: known });
        const unknown = `nobody-${randomUUID().slice(0, 8)}@example.com`;
        const { context, page } = await clientContext(chrome);
        const answer = async (address: string) => {
          await page.goto(`${ISSUER}/forgot-password`);
          await page.getByLabel('Email').fill(address);
          await page.getByRole('button', { name: 'Send link' }).click();
          await page.getByRole('heading', { name: 'Check your email' }).waitFor();
          return (await page.locator('main').innerText()).replace(address, '<address>');
        };
        const mailsBefore = smtp.mails.length;
        const forUnknown = await answer(unknown);
        const forKnown = await answer(known);
        assert.equal(forUnknown, forKnown);
        await smtp.mail(mailsBefore);
        await server.gatehouse.engine.accountMail.idle();
        assert.deepEqual(
          smtp.mails
            .slice(mailsBefore)
            .map((mail) => (mail.to && !Array.isArray(mail.to) ? mail.to.text : '')),
          [known],
        );
        await context.close();
      });

      if (backend === 'sqlite') {
        it('fits every page of it into 375 px, with labelled controls (screenshots: GATEHOUSE_SCREENSHOTS)', async () => {
          const email = `phone-${randomUUID().slice(0, 8)}@example.com`;
          const { user } = await server.user(undefined, undefined, { email });
          const { context, page } = await clientContext(chrome, 375);
          const check = async (name: string) => {
            const problems = await page.evaluate(() => {
              const found: string[] = [];
              if (document.documentElement.scrollWidth > window.innerWidth) found.push('scrolls sideways');
              for (const control of document.querySelectorAll<HTMLInputElement>('input:not([type=hidden])')) {
                if ((control.labels?.length ?? 0) === 0) found.push(`no label: ${control.name}`);
              }
              return found;
            });
            assert.deepEqual(problems, [], name);
            if (SCREENSHOTS)
              await page.screenshot({ path: join(SCREENSHOTS, `${name}-375.png`), fullPage: true });
          };
          if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
          await page.goto(`${ISSUER}/sign-in`);
          await check('sign-in-with-forgot-password');
          await page.getByRole('link', { name: 'Forgot password?' }).click();
          await check('forgot-password');
          await page.getByLabel('Email').fill('not an address');
          // Past the browser's own check (type=email), to see the server's answer.
          await page.locator('form').evaluate((form) => form.setAttribute('novalidate', ''));
          await page.getByRole('button', { name: 'Send link' }).click();
          await page.getByRole('alert').waitFor();
          await check('forgot-password-invalid');
          const mailsBefore = smtp.mails.length;
          await page.getByLabel('Email').fill(email);
          await page.getByRole('button', { name: 'Send link' }).click();
          await page.getByRole('heading', { name: 'Check your email' }).waitFor();
          await check('forgot-password-sent');
          const link = linkIn(await smtp.mail(mailsBefore), '/password-reset');
          await page.goto(link);
          await check('new-password');
          await page.getByLabel('New password').fill('short');
          // The browser's own check (minlength) would stop the form; the server's answer is checked here.
          await page.locator('form').evaluate((form) => form.setAttribute('novalidate', ''));
          await page.getByRole('button', { name: 'Set password' }).click();
          await page.getByRole('alert').waitFor();
          await check('new-password-refused');
          await page.getByLabel('New password').fill(NEW_PASSWORD);
          await page.getByRole('button', { name: 'Set password' }).click();
          await page.getByRole('heading', { name: 'Password set' }).waitFor();
          await check('password-set');
          await page.goto(link);
          await check('link-used');
          await page.goto(`${ISSUER}/sign-in?next=/account/security`);
          await signIn(page, user.username, NEW_PASSWORD);
          await page.waitForURL(`${ISSUER}/account/security`);
          // Following the mailed link proved the address too.
          await page.getByRole('region', { name: 'Email' }).getByText('(verified)').waitFor();
          await check('security-email-verified-by-reset');
          await context.close();
        });
      }

      it('"Verify" on the security page: email_verified is false in the ID token, then true once the mailed link is followed', async () => {
        const email = `verify-${randomUUID().slice(0, 8)}@example.com`;
        const { user, password } = await server.user(undefined, undefined, { email });
        const { context, page } = await clientContext(chrome);
        await page.goto(`${ISSUER}/sign-in?next=/account/security`);
        await signIn(page, user.username, password);
        await page.waitForURL(`${ISSUER}/account/security`);
        const section = page.getByRole('region', { name: 'Email' });
        await section.getByText(email).waitFor();
        await section.getByText('(not verified)').waitFor();

        const before = await idToken(page);
        assert.equal(before.email, email);
        assert.equal(before.email_verified, false);

        const mailsBefore = smtp.mails.length;
        await page.goto(`${ISSUER}/account/security`);
        await page.getByRole('button', { name: `Verify ${email}` }).click();
        await page.getByRole('status').getByText(`Verification link sent to ${email}`).waitFor();
        const mail = await smtp.mail(mailsBefore);
        assert.equal(mail.subject, 'Verify your email address for Gatehouse');
        const link = linkIn(mail, '/email-verification');

        await page.goto(link);
        await page.getByRole('heading', { name: 'Verify your email address' }).waitFor();
        await page.getByRole('button', { name: 'Verify' }).click();
        await page.getByRole('heading', { name: 'Email address verified' }).waitFor();

        const afterwards = await idToken(page);
        assert.equal(afterwards.email_verified, true);
        await page.goto(`${ISSUER}/account/security`);
        await page.getByRole('region', { name: 'Email' }).getByText('(verified)').waitFor();
        assert.equal(await page.getByRole('button', { name: `Verify ${email}` }).count(), 0);

        // A new address (as /v1/users or `users update` sets it) is unverified again.
        await server.gatehouse.engine.users.update(await server.gatehouse.engine.users.require(user.id), {
          email: `moved-${email}`,
        });
        assert.equal((await idToken(page)).email_verified, false);
        await context.close();
      });
    });
  }
});

describe('Mail without SMTP, and SMTP failures, in the log', () => {
  for (const backend of backends()) {
    it(`writes the mail, link included, to the log when no SMTP server is configured (${backend})`, async () => {
      const lines: Record<string, unknown>[] = [];
      const stream = { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) };
      const server = await startTestServer(backend, {}, { logger: { level: 'info', stream } });
      try {
        const email = `log-${randomUUID().slice(0, 8)}@example.com`;
        await server.user(undefined, undefined, { email });
        const browser = new FormBrowser(server);
        const form = await browser.get('/forgot-password');
        const sent = await browser.post('/forgot-password', {
          csrf_token: FormBrowser.hidden(form, 'csrf_token'),
          email,
        });
        assert.equal(sent.status, 200, sent.text);
        await server.gatehouse.engine.accountMail.idle();
        const logged = lines.filter((line) => line.mail !== undefined);
        assert.equal(logged.length, 1);
        assert.equal(logged[0]?.level, 30, 'at info');
        const mail = logged[0]?.mail as { to: string; text: string };
        assert.equal(mail.to, email);
        const link = new RegExp(`${ISSUER}(/password-reset\\?token=[A-Za-z0-9_-]{43})`).exec(mail.text)?.[1];
        assert.ok(link, mail.text);
        const page = await browser.get(link);
        assert.equal(page.status, 200);
        assert.match(page.text, /New password/);
      } finally {
        await server.close();
      }
    });
  }

  it('logs a mail the SMTP server refused without its password', async () => {
    const smtp = await startSmtpServer();
    const lines: string[] = [];
    const stream = { write: (line: string) => lines.push(line) };
    const wrong = smtp.url.replace(smtp.password, 'not-the-password-7c1e');
    const [backend = 'sqlite'] = backends();
    const server = await startTestServer(backend, { smtpUrl: wrong }, { logger: { level: 'info', stream } });
    try {
      const email = `fail-${randomUUID().slice(0, 8)}@example.com`;
      const { user, password } = await server.user(undefined, undefined, { email });
      const browser = new FormBrowser(server);
      await browser.signIn(user.username, password, '/account/security');
      const page = await browser.get('/account/security');
      assert.match(page.text, /Verify/);
      const asked = await browser.post('/account/security/email/verify', {
        csrf_token: FormBrowser.hidden(page, 'csrf_token'),
      });
      assert.equal(asked.status, 303);
      await server.gatehouse.engine.accountMail.idle();
      assert.equal(smtp.mails.length, 0);
      const failure = lines.find((line) => line.includes('a mail could not be sent'));
      assert.ok(failure, lines.join('\n'));
      assert.match(failure, /SMTP server did not take the mail/);
      assert.doesNotMatch(lines.join('\n'), /not-the-password-7c1e/);
      // Nor does the server's start say it.
      assert.doesNotMatch(lines.join('\n'), /smtp:\/\/gatehouse:/);
    } finally {
      await server.close();
      await smtp.close();
    }
  });
});
