import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Client, User } from '../../src/core/model.js';
import { FormBrowser } from '../helpers/form-browser.js';
import { backends } from '../helpers/backends.js';
import type { HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The device flow's consent page (RFC 8628 §3.3) on each store: a request without a good ticket is a
// 400 code page and nothing else (no error in the server's log), and a ticket works only in the
// browser that typed the code (RFC 8628 §5.4: a link sent to someone else must not skip the code).

const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
const ISSUER = 'https://gatehouse.test';
const SENTINEL = 'device-consent-sentinel';

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
}

/** The server's log lines, and a wait for the access-log line of a request with a given id. */
function capturedLog() {
  const lines: LogLine[] = [];
  const waiting = new Map<string, () => void>();
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n').filter(Boolean)) {
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        if (line.msg === 'request' && line.reqId !== undefined) waiting.get(line.reqId)?.();
      }
      done();
    },
  });
  return {
    lines,
    logger: { level: 'info', stream },
    /** Resolves once the access-log line of the request with this X-Request-Id is written. */
    answered(requestId: string): Promise<void> {
      if (lines.some((line) => line.msg === 'request' && line.reqId === requestId)) return Promise.resolve();
      return new Promise((resolve) => waiting.set(requestId, resolve));
    },
  };
}

/** The code page, saying why the consent page is not shown. */
function assertCodePage(res: HttpResponse, why: RegExp): void {
  assert.equal(res.status, 400, res.text.slice(0, 400));
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(res.text, /name="user_code"/);
  assert.doesNotMatch(res.text, /name="decision"/);
  assert.match(res.text, why);
}

for (const backend of backends()) {
  describe(`the device consent page (${backend})`, () => {
    let server: TestServer;
    let log: ReturnType<typeof capturedLog>;
    let alice: { user: User; password: string };
    let tv: Client;

    before(async () => {
      log = capturedLog();
      server = await startTestServer(backend, { logLevel: 'info' }, { logger: log.logger });
      alice = await server.user();
      tv = (
        await server.client({
          name: 'Living Room TV',
          public: true,
          grant_types: [GRANT_TYPE],
          scopes: ['read'],
        })
      ).client;
    });
    after(async () => {
      await server?.close();
    });

    async function start(): Promise<{ user_code: string; device_code: string }> {
      const res = await server.http.request('/device_authorization', {
        form: { client_id: tv.id, scope: 'read' },
      });
      assert.equal(res.status, 200, res.text);
      return res.json as { user_code: string; device_code: string };
    }

    /** The code typed on the verification page: the consent page's address POST /device gives. */
    async function enter(browser: FormBrowser, userCode: string): Promise<string> {
      const form = await browser.get('/device');
      const entered = await browser.post('/device', {
        csrf_token: FormBrowser.hidden(form, 'csrf_token'),
        user_code: userCode,
      });
      assert.equal(entered.status, 303, entered.text.slice(0, 300));
      const target = String(entered.headers.location);
      assert.match(target, /^\/device\/consent\?user_code=.+&ticket=/);
      return target;
    }

    it('a missing or bad ticket is a 400 code page saying why, and no error in the log', async () => {
      const started = await start();
      const browser = new FormBrowser(server);
      const form = await browser.get('/device');
      const why = /Enter the code your device shows/;
      assertCodePage(await browser.get('/device/consent'), why);
      assertCodePage(await browser.get(`/device/consent?user_code=${started.user_code}`), why);
      assertCodePage(await browser.get(`/device/consent?user_code=${started.user_code}&ticket=forged`), why);
      assertCodePage(await browser.get('/device/consent?user_code=a&user_code=b&ticket=x'), why);
      assertCodePage(
        await browser.post('/device/consent', {
          csrf_token: FormBrowser.hidden(form, 'csrf_token'),
          user_code: started.user_code,
          ticket: 'forged',
          decision: 'allow',
          scope: 'read',
          lifetime: '3600',
        }),
        why,
      );
      // The log is written as each request ends: once a later request's line is there, so is every
      // line of the requests before it.
      const sentinel = await server.http.request('/healthz', { headers: { 'x-request-id': SENTINEL } });
      assert.equal(sentinel.status, 200);
      await log.answered(SENTINEL);
      const errors = log.lines.filter((line) => line.level >= 50);
      assert.deepEqual(errors, [], JSON.stringify(errors));
      const refusals = log.lines.filter((line) => line.msg === 'request' && line.reqId !== SENTINEL);
      assert.ok(refusals.length >= 5, 'the refusals were logged as requests');
    });

    it('a ticket made in one browser is refused in another, which gets the code page; the first still uses it', async () => {
      const started = await start();
      const typedIt = new FormBrowser(server);
      const link = await enter(typedIt, started.user_code);

      // Another browser, signed in or not, given the link: the code page, never the consent page.
      const stranger = new FormBrowser(server);
      assertCodePage(await stranger.get(link), /Enter the code your device shows/);
      const victim = new FormBrowser(server);
      assert.equal((await victim.signIn(alice.user.username, alice.password)).status, 303);
      assertCodePage(await victim.get(link), /Enter the code your device shows/);
      // Nor may it answer with the link's ticket and its own CSRF token.
      const victimForm = await victim.get('/device');
      assertCodePage(
        await victim.post('/device/consent', {
          csrf_token: FormBrowser.hidden(victimForm, 'csrf_token'),
          user_code: started.user_code,
          ticket: new URL(link, ISSUER).searchParams.get('ticket') ?? '',
          decision: 'allow',
          scope: 'read',
          lifetime: '3600',
        }),
        /Enter the code your device shows/,
      );
      // Signing in with the link as what comes next does not make it the victim's.
      const signInPage = await stranger.get(`/sign-in?next=${encodeURIComponent(link)}`);
      const signedIn = await stranger.post('/sign-in', {
        csrf_token: FormBrowser.hidden(signInPage, 'csrf_token'),
        next: FormBrowser.hidden(signInPage, 'next'),
        username: alice.user.username,
        password: alice.password,
      });
      assert.equal(signedIn.status, 303);
      assertCodePage(await stranger.get(String(signedIn.headers.location)), /Enter the code/);

      // The browser that typed the code: sign-in (a new browser id), then the consent page, and Allow.
      const signInFirst = await typedIt.get(link);
      assert.equal(signInFirst.status, 200);
      assert.equal(FormBrowser.hidden(signInFirst, 'next'), link);
      const own = await typedIt.post('/sign-in', {
        csrf_token: FormBrowser.hidden(signInFirst, 'csrf_token'),
        next: FormBrowser.hidden(signInFirst, 'next'),
        username: alice.user.username,
        password: alice.password,
      });
      assert.equal(own.status, 303);
      const consent = await typedIt.get(String(own.headers.location));
      assert.equal(consent.status, 200, consent.text.slice(0, 400));
      assert.match(consent.text, /Living Room TV/);
      const allowed = await typedIt.post('/device/consent', {
        csrf_token: FormBrowser.hidden(consent, 'csrf_token'),
        user_code: FormBrowser.hidden(consent, 'user_code'),
        ticket: FormBrowser.hidden(consent, 'ticket'),
        decision: 'allow',
        scope: 'read',
        lifetime: '3600',
      });
      assert.equal(allowed.status, 200, allowed.text.slice(0, 400));
      const tokens = await server.http.token({
        grant_type: GRANT_TYPE,
        client_id: tv.id,
        device_code: started.device_code,
      });
      assert.equal(tokens.status, 200, tokens.text);
    });
  });
}
