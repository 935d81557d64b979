import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import cookie from '@fastify/cookie';
import formBody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import type { SessionAuthentication } from '../../src/core/model.js';
import { BrowserContexts } from '../../src/http/ui/browser-context.js';
import { CsrfTokens } from '../../src/http/ui/csrf.js';
import { passkeySecondFactorOption } from '../../src/http/ui/pages/passkey-second-factor.js';
import {
  registerPasskeyRoutes,
  type PendingPasswordSignIn,
} from '../../src/http/ui/routes/passkey-routes.js';
import type { UiContext } from '../../src/http/ui/ui-context.js';
import { addUser } from '../helpers/fakes/fixtures.js';
import { ISSUER, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';

/**
 * The second-factor endpoint pair (decision 33) with a pending password sign-in as the second-factor
 * page provides it (PendingPasswordSignIn): only that user's passkeys are asked for, and a right one
 * completes the pending sign-in with the passkey's method.
 */
async function appWith(t: TestEngine, pending: PendingPasswordSignIn): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(cookie);
  await app.register(formBody);
  const ui: UiContext = {
    config: t.config,
    engine: t.engine,
    browsers: new BrowserContexts(t.engine.browserSessions, new CsrfTokens(Buffer.alloc(32, 3))),
  };
  // The page the form is on: a browser id and its CSRF token.
  app.get('/page', async (request, reply) => {
    const browser = await ui.browsers.load(request, reply);
    return reply.send(browser.csrfToken);
  });
  registerPasskeyRoutes(app, ui, pending);
  return app;
}

describe('a passkey as the second factor, through its endpoint pair', () => {
  it('asks for the pending user’s passkeys and completes the pending sign-in with one', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    const stranger = await addUser(t);
    const keys = new Map<string, SoftwareAuthenticator>();
    for (const owner of [user, stranger]) {
      const authenticator = new SoftwareAuthenticator({ origin: ISSUER });
      const options = await t.engine.passkeys.registrationOptions(owner, 'bs_setup');
      const added = await t.engine.passkeys.register(owner, 'bs_setup', {
        name: 'Key',
        credential: authenticator.create(options),
      });
      assert.equal(added.outcome, 'added');
      keys.set(owner.id, authenticator);
    }
    const completed: SessionAuthentication[] = [];
    let refusals = 0;
    const app = await appWith(t, {
      pending: async () => ({ userId: user.id, next: '/account/apps' }),
      complete: async (_request, reply, passkey) => {
        completed.push(passkey);
        return reply.redirect('/account/apps', 303);
      },
      // The code step again, with its error (second-factor-routes.ts passkeyPendingSignIn).
      refused: async (_request, reply) => {
        refusals += 1;
        return reply.code(401).send('the code step again');
      },
    });
    const page = await app.inject({ method: 'GET', url: '/page' });
    const browserCookie = String(page.headers['set-cookie']).split(';', 1)[0] ?? '';
    const csrf = page.body;
    const post = (url: string, form: Record<string, string>) =>
      app.inject({
        method: 'POST',
        url,
        headers: { cookie: browserCookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(form).toString(),
      });

    const options = await post('/sign-in/passkey/second-factor/options', { csrf_token: csrf });
    assert.equal(options.statusCode, 200);
    const request = JSON.parse(options.body) as { challenge: string; allowCredentials: { id: string }[] };
    assert.deepEqual(
      request.allowCredentials.map((c) => c.id),
      [keys.get(user.id)!.credentialId],
    );

    // Another user's passkey is not this sign-in's second factor.
    const wrong = await post('/sign-in/passkey/second-factor', {
      csrf_token: csrf,
      credential: JSON.stringify(keys.get(stranger.id)!.get(request)),
    });
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.body, 'the code step again', 'the person stays on the code step');
    assert.equal(refusals, 1);
    assert.deepEqual(completed, []);

    const again = JSON.parse(
      (await post('/sign-in/passkey/second-factor/options', { csrf_token: csrf })).body,
    ) as { challenge: string };
    const right = await post('/sign-in/passkey/second-factor', {
      csrf_token: csrf,
      credential: JSON.stringify(keys.get(user.id)!.get(again)),
    });
    assert.equal(right.statusCode, 303);
    assert.deepEqual(completed, [{ method: 'passkey', at: t.clock.now() }]);
    await app.close();
  });

  it('renders "Use a passkey" posting to the pair, with its script', () => {
    const option = String(passkeySecondFactorOption('/gh', 'token-1'));
    assert.match(option, /action="\/gh\/sign-in\/passkey\/second-factor"/);
    assert.match(option, /data-options="\/gh\/sign-in\/passkey\/second-factor\/options"/);
    assert.match(option, />Use a passkey<\/button>/);
    assert.match(option, /<script type="module" src="\/gh\/assets\/passkey"><\/script>/);
    assert.match(option, /name="csrf_token" value="token-1"/);
  });
});
