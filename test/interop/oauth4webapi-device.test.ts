import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import type { User } from '../../src/core/model.js';
import { FormBrowser } from '../helpers/form-browser.js';
import { backends } from '../helpers/backends.js';
import {
  registerLibraryClient,
  signInFrom,
  startLibraryServer,
  type LibraryServer,
} from '../helpers/oauth4webapi.js';

// oauth4webapi (panva), used directly, as the device of RFC 8628: RFC 8414 discovery (the library reads
// device_authorization_endpoint), deviceAuthorizationRequest and processDeviceAuthorizationResponse
// (it checks the response's members), then deviceCodeGrantRequest and processDeviceCodeResponse polled
// as the library's documentation does it (authorization_pending: wait; slow_down: wait 5 s more)
// until the user approves in the browser (driven by HTTP, FormBrowser). With `openid`, the library
// validates the ID token too.

const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

for (const backend of backends()) {
  describe(`interop: oauth4webapi as a device (${backend})`, () => {
    let lib: LibraryServer;
    let alice: { user: User; password: string };

    before(async () => {
      lib = await startLibraryServer(backend, { algorithm: 'oidc' });
      alice = await lib.server.user();
    });
    after(async () => {
      await lib?.close();
    });

    /** The user's part: the code typed on the verification page, sign-in, then Allow. */
    async function approveInBrowser(verificationUriComplete: string): Promise<void> {
      const browser = new FormBrowser(lib.server);
      const url = new URL(verificationUriComplete);
      const form = await browser.get(url.pathname + url.search);
      const entered = await browser.post('/device', {
        csrf_token: FormBrowser.hidden(form, 'csrf_token'),
        user_code: url.searchParams.get('user_code') ?? '',
      });
      assert.equal(entered.status, 303, entered.text.slice(0, 300));
      const signInPage = await browser.get(String(entered.headers.location));
      const consent = await browser.get(await signInFrom(browser, signInPage, alice));
      const allowed = await browser.post('/device/consent', {
        csrf_token: FormBrowser.hidden(consent, 'csrf_token'),
        user_code: FormBrowser.hidden(consent, 'user_code'),
        ticket: FormBrowser.hidden(consent, 'ticket'),
        decision: 'allow',
        lifetime: '3600',
        scope: ['profile', 'read', 'offline_access'],
      });
      assert.equal(allowed.status, 200, allowed.text.slice(0, 300));
    }

    for (const kind of ['public (none)', 'confidential (client_secret_basic)'] as const) {
      it(`${kind}: device authorization, polling with its answers, the browser's approval, tokens and ID token`, async () => {
        const { server, as, issuer, options } = lib;
        assert.equal(as.device_authorization_endpoint, `${issuer.origin}/device_authorization`);
        assert.ok(as.grant_types_supported?.includes(GRANT_TYPE));
        const { registered, client, authentication } = await registerLibraryClient(server, {
          name: `oauth4webapi device ${kind}`,
          grant_types: [GRANT_TYPE, 'refresh_token'],
          scopes: ['openid', 'profile', 'read', 'offline_access'],
          public: kind.startsWith('public'),
        });
        const device = await oauth.processDeviceAuthorizationResponse(
          as,
          client,
          await oauth.deviceAuthorizationRequest(
            as,
            client,
            authentication,
            new URLSearchParams({ scope: 'openid profile read offline_access' }),
            options(),
          ),
        );
        assert.match(device.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
        assert.equal(device.verification_uri, `${issuer.origin}/device`);
        assert.equal(device.expires_in, 600);

        // The library's polling loop, on the test server's clock: each answer decides the next wait.
        let interval = device.interval ?? 5;
        const answers: string[] = [];
        let tokens: oauth.TokenEndpointResponse | undefined;
        for (let attempt = 0; attempt < 6 && tokens === undefined; attempt++) {
          // The second poll comes too soon, as a device that ignores the interval would send it.
          server.clock.advance(attempt === 1 ? 1 : interval);
          if (attempt === 3) await approveInBrowser(device.verification_uri_complete ?? '');
          try {
            tokens = await oauth.processDeviceCodeResponse(
              as,
              client,
              await oauth.deviceCodeGrantRequest(as, client, authentication, device.device_code, options()),
            );
            answers.push('tokens');
          } catch (error) {
            if (!(error instanceof oauth.ResponseBodyError)) throw error;
            answers.push(error.error);
            if (error.error === 'slow_down') interval += 5;
            else if (error.error !== 'authorization_pending') throw error;
          }
        }
        assert.deepEqual(answers, ['authorization_pending', 'slow_down', 'authorization_pending', 'tokens']);
        assert.ok(tokens);
        assert.equal(tokens.token_type.toLowerCase(), 'bearer');
        assert.equal(tokens.scope, 'openid profile read offline_access');
        assert.equal(typeof tokens.refresh_token, 'string');
        const claims = oauth.getValidatedIdTokenClaims(tokens);
        assert.equal(claims?.sub, alice.user.id);
        assert.equal(claims?.aud, registered.id);

        // Once redeemed, the device code is spent.
        server.clock.advance(interval);
        await assert.rejects(
          oauth.processDeviceCodeResponse(
            as,
            client,
            await oauth.deviceCodeGrantRequest(as, client, authentication, device.device_code, options()),
          ),
          (error: unknown) => error instanceof oauth.ResponseBodyError && error.error === 'invalid_grant',
        );
      });
    }
  });
}
