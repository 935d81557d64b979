import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** The href of the link whose text is `text`. */
function link(page: string, text: string): string | undefined {
  return new RegExp(`<a href="([^"]*)">${text}</a>`).exec(page)?.[1];
}

for (const backend of backends()) {
  for (const basePath of ['', '/auth']) {
    describe(`the issuer's root (${backend}, base path "${basePath}")`, () => {
      let server: TestServer;
      before(async () => {
        server = await startTestServer(backend, { productName: 'Acme Accounts', basePath });
      });
      after(async () => {
        await server.close();
      });

      it('answers a browser with a page naming the server and linking to what it offers', async () => {
        // The test client's paths are relative to the base path.
        const res = await server.http.request('/', { headers: { accept: BROWSER_ACCEPT } });
        assert.equal(res.status, 200);
        assert.match(String(res.headers['content-type']), /^text\/html/);
        assert.match(String(res.headers.vary), /accept/i);
        assert.match(res.text, /<h1>Acme Accounts<\/h1>/);
        assert.equal(link(res.text, 'Sign in'), `${basePath}/sign-in`);
        assert.equal(link(res.text, 'Connected apps'), `${basePath}/account/apps`);
        assert.equal(link(res.text, 'Playground'), `${basePath}/playground`);
        assert.equal(link(res.text, 'API reference'), `${basePath}/v1/openapi`);
        // An OpenID Provider first: relying parties start from its configuration (OpenID Connect Discovery 1.0 §4).
        assert.match(res.text, /OpenID Connect/);
        assert.equal(
          link(res.text, 'OpenID Provider configuration'),
          `${basePath}/.well-known/openid-configuration`,
        );
        assert.equal(
          link(res.text, 'Authorization server metadata'),
          `${basePath}/.well-known/oauth-authorization-server`,
        );
        // Every link leads somewhere that answers.
        for (const path of [
          '/sign-in',
          '/.well-known/openid-configuration',
          '/.well-known/oauth-authorization-server',
        ]) {
          assert.equal((await server.http.request(path)).status, 200, path);
        }
      });

      it('answers the base path without its trailing slash too', async () => {
        if (basePath === '') return;
        const res = await server.http.request('', { headers: { accept: BROWSER_ACCEPT } });
        assert.equal(res.status, 200);
        assert.match(res.text, /<h1>Acme Accounts<\/h1>/);
      });

      it('keeps the JSON 404 for every other client', async () => {
        for (const accept of ['application/json', '*/*', undefined]) {
          const res = await server.http.request('/', {
            headers: accept === undefined ? {} : { accept },
          });
          assert.equal(res.status, 404, String(accept));
          assert.deepEqual(res.json, { error: 'not_found', error_description: 'no such endpoint' });
        }
      });
    });
  }
}
