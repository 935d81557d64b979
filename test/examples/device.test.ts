import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DeviceSignInError, signInWithDevice, type DeviceInstructions } from '../../examples/device.js';
import type { Client, User } from '../../src/core/model.js';
import {
  browserSkip,
  clientContext,
  expectConsentPage,
  launchChromium,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { trustingFetch } from '../helpers/trusting-fetch.js';
import { freePort } from '../helpers/spawned-server.js';

// examples/device.ts end to end: the example starts the flow and polls; Chromium enters its code on
// the verification page, signs in and allows (or denies); the example prints who signed in. Its
// waits between polls advance the test server's clock, and the one after the first poll waits for the
// browser to have answered: nothing waits on the wall clock.

const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

describe(
  'examples/device signs a user in with the device authorization grant, in Chromium',
  { skip: browserSkip },
  () => {
    let browser: TestBrowser;
    before(async () => {
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
    });

    for (const backend of backends()) {
      describe(backend, () => {
        let gatehouse: TestServer;
        let https: ReturnType<typeof trustingFetch>;
        let issuer: string;
        let alice: { user: User; password: string };
        let device: Client;
        before(async () => {
          const port = await freePort();
          issuer = `https://localhost:${port}`;
          gatehouse = await startTestServer(backend, { port, issuer }, { transport: 'https' });
          https = trustingFetch(gatehouse.ca);
          alice = await gatehouse.user(undefined, undefined, { name: 'Alice Example' });
          // As examples/README.md registers it: a public client of the device grant.
          device = (
            await gatehouse.client({
              name: 'Example device',
              public: true,
              grant_types: [GRANT_TYPE],
              scopes: ['openid', 'profile'],
            })
          ).client;
        });
        after(async () => {
          https?.close();
          await gatehouse?.close();
        });

        /** Runs the example; `answer` is what the user does in the browser with the instructions shown. */
        function run(answer: (instructions: DeviceInstructions) => Promise<void>) {
          const shown = deferred<DeviceInstructions>();
          const answered = deferred<void>();
          let polls = 0;
          const result = signInWithDevice({
            issuer,
            clientId: device.id,
            fetch: https.fetch,
            prompt: (instructions) => shown.resolve(instructions),
            wait: async (seconds) => {
              // The first poll goes at once (authorization_pending); the next after the user answered.
              if (polls++ > 0) await answered.promise;
              gatehouse.clock.advance(seconds);
            },
          });
          const browsing = shown.promise.then(async (instructions) => {
            await answer(instructions);
            answered.resolve();
            return instructions;
          });
          return { result, browsing, polls: () => polls };
        }

        it('prints the code and URL, polls, and names the user once they allowed it in the browser', async () => {
          const { result, browsing, polls } = run(async (instructions) => {
            const { context, page } = await clientContext(browser);
            try {
              await page.goto(instructions.verificationUri);
              await page.getByLabel('Code').fill(instructions.userCode);
              await page.getByRole('button', { name: 'Continue' }).click();
              await signIn(page, alice.user.username, alice.password);
              await expectConsentPage(page, 'Example device');
              assert.equal(await page.locator('#device-code').textContent(), instructions.userCode);
              await page.getByRole('button', { name: 'Allow' }).click();
              await page.getByRole('heading', { name: 'Device connected' }).waitFor();
            } finally {
              await context.close();
            }
          });
          const instructions = await browsing;
          assert.equal(instructions.verificationUri, `${issuer}/device`);
          assert.equal(
            instructions.verificationUriComplete,
            `${issuer}/device?user_code=${instructions.userCode}`,
          );
          assert.equal(instructions.expiresIn, 600);
          const { user, tokens } = await result;
          assert.deepEqual(
            { id: user.id, username: user.username, name: user.name },
            {
              id: alice.user.id,
              username: alice.user.username,
              name: 'Alice Example',
            },
          );
          assert.equal(tokens.scope, 'openid profile');
          assert.equal(typeof tokens.id_token, 'string');
          assert.equal(polls(), 2);
        });

        it('a denial ends the example with access_denied', async () => {
          const { result } = run(async (instructions) => {
            const { context, page } = await clientContext(browser);
            try {
              await page.goto(instructions.verificationUriComplete ?? '');
              await page.getByRole('button', { name: 'Continue' }).click();
              await signIn(page, alice.user.username, alice.password);
              await page.getByRole('button', { name: 'Deny' }).click();
              await page.getByRole('heading', { name: 'Access denied' }).waitFor();
            } finally {
              await context.close();
            }
          });
          await assert.rejects(
            result,
            (error: unknown) => error instanceof DeviceSignInError && error.error === 'access_denied',
          );
        });
      });
    }
  },
);
