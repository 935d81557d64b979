import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createClientMetadataFetcher, freshnessSeconds } from '../../src/outbound/client-metadata-fetcher.js';
import { PublicFetchError } from '../../src/outbound/public-https-get.js';
import { startKeyServer, type KeyServer } from '../helpers/key-server.js';

/**
 * The Client ID Metadata Document fetcher (src/outbound, decision 46): the freshness an answer's HTTP
 * caching gives (RFC 9111 §4.2.1), and the jwks_uri fetch's rules (decision 21) against a real HTTPS
 * server. Its reasons reach the authorization request's error page, so they name nothing but the host
 * and what went wrong.
 */

describe('freshnessSeconds (RFC 9111 §4.2.1)', () => {
  const DATE = 'Fri, 15 Jan 2027 08:00:00 GMT';
  const ROWS: Array<[string, IncomingHttpHeaders, number | undefined]> = [
    ['nothing said', {}, undefined],
    ['max-age', { 'cache-control': 'max-age=600' }, 600],
    ['max-age among others, upper case', { 'cache-control': 'Public, MAX-AGE=300, must-revalidate' }, 300],
    ['max-age quoted', { 'cache-control': 'max-age="120"' }, 120],
    ['s-maxage before max-age', { 'cache-control': 'max-age=600, s-maxage=60' }, 60],
    ['no-store', { 'cache-control': 'no-store, max-age=600' }, 0],
    ['no-cache', { 'cache-control': 'no-cache' }, 0],
    ['a max-age that is no number: ignored', { 'cache-control': 'max-age=soon' }, undefined],
    ['Expires less Date', { expires: 'Fri, 15 Jan 2027 09:00:00 GMT', date: DATE }, 3600],
    ['Expires in the past', { expires: 'Fri, 15 Jan 2027 07:00:00 GMT', date: DATE }, 0],
    ['an Expires that is no date: expired (RFC 9111 §5.3)', { expires: '0', date: DATE }, 0],
    [
      'max-age over Expires',
      { 'cache-control': 'max-age=60', expires: 'Fri, 15 Jan 2027 09:00:00 GMT', date: DATE },
      60,
    ],
  ];
  for (const [name, headers, expected] of ROWS) {
    it(`${name}: ${String(expected)}`, () => assert.equal(freshnessSeconds(headers), expected));
  }
});

describe('the Client ID Metadata Document fetcher against an HTTPS server', () => {
  let host: KeyServer;
  const document = (path: string) => ({
    client_id: host.url(path),
    redirect_uris: ['https://app.example/cb'],
  });
  before(async () => {
    host = await startKeyServer();
    host.answers.set('/plain.json', { json: document('/plain.json') });
    host.answers.set('/cached.json', {
      json: document('/cached.json'),
      headers: { 'cache-control': 'public, max-age=900', 'content-type': 'application/json' },
    });
    host.answers.set('/moved.json', { status: 302, headers: { location: '/plain.json' } });
    host.answers.set('/big.json', { bytes: Buffer.from(JSON.stringify({ pad: 'x'.repeat(2000) })) });
    host.answers.set('/page.html', { bytes: Buffer.from('<html>a sign-in page</html>') });
    host.answers.set('/never.json', 'never');
  });
  after(async () => {
    await host?.close();
  });

  const fetcher = (
    options: { allowPrivateAddresses?: boolean; timeoutMs?: number; maxBytes?: number } = {},
  ) =>
    createClientMetadataFetcher({
      allowPrivateAddresses: options.allowPrivateAddresses ?? true,
      timeoutMs: options.timeoutMs ?? 5000,
      maxBytes: options.maxBytes ?? 1000,
      ca: host.ca,
    });

  async function refused(
    url: string,
    message: RegExp,
    options?: Parameters<typeof fetcher>[0],
  ): Promise<void> {
    await assert.rejects(fetcher(options).fetch(url), (error: unknown) => {
      assert.ok(error instanceof PublicFetchError, String(error));
      assert.match(error.message, message);
      // Only the host and the reason: no address, port or Node message beyond them.
      assert.doesNotMatch(error.message, /127\.0\.0\.1:\d|ECONN|::1|getaddrinfo/);
      return true;
    });
  }

  it('returns the document, and no freshness when the answer says nothing', async () => {
    assert.deepEqual(await fetcher().fetch(host.url('/plain.json')), {
      document: document('/plain.json'),
      maxAgeSeconds: undefined,
    });
  });

  it("returns the answer's Cache-Control max-age", async () => {
    const answer = await fetcher().fetch(host.url('/cached.json'));
    assert.deepEqual(answer.document, document('/cached.json'));
    assert.equal(answer.maxAgeSeconds, 900);
  });

  it('refuses a private address unless allowPrivateAddresses', async () => {
    const before = host.requests.length;
    const port = new URL(host.origin).port;
    await refused(host.url('/plain.json'), /^127\.0\.0\.1 is not a public address$/, {
      allowPrivateAddresses: false,
    });
    await refused(`https://localhost:${port}/plain.json`, /^localhost resolves to a non-public address$/, {
      allowPrivateAddresses: false,
    });
    assert.equal(host.requests.length, before, 'no request reached the host');
    assert.ok(await fetcher({ allowPrivateAddresses: true }).fetch(`https://localhost:${port}/plain.json`));
  });

  it('does not follow a redirect (302)', async () => {
    const before = host.requests.length;
    await refused(host.url('/moved.json'), /^answered 302$/);
    assert.deepEqual(host.requests.slice(before), ['/moved.json'], 'the Location was not fetched');
  });

  it('refuses an answer other than 200', async () => {
    await refused(host.url('/missing.json'), /^answered 404$/);
  });

  it('refuses an answer over the size limit', async () => {
    await refused(host.url('/big.json'), /^answer larger than 1000 bytes$/);
    assert.ok(await fetcher({ maxBytes: 4096 }).fetch(host.url('/big.json')));
  });

  it('refuses an answer that is not JSON', async () => {
    await refused(host.url('/page.html'), /^the answer is not JSON$/);
  });

  it('gives up on a host that never answers, at its time limit', async () => {
    const waited = host.requested('/never.json');
    await refused(host.url('/never.json'), /^no answer within 200 ms$/, { timeoutMs: 200 });
    await waited;
  });

  it('refuses a host whose certificate it does not trust, naming no address', async () => {
    const untrusting = createClientMetadataFetcher({
      allowPrivateAddresses: true,
      timeoutMs: 5000,
      maxBytes: 1000,
    });
    await assert.rejects(untrusting.fetch(host.url('/plain.json')), (error: unknown) => {
      assert.ok(error instanceof PublicFetchError);
      assert.equal(error.message, 'its TLS certificate is not trusted');
      return true;
    });
  });

  it('refuses a closed port with its reason only', async () => {
    // A port that was just listened on and closed: nothing answers there.
    const closed = await startKeyServer();
    const url = closed.url('/c.json');
    await closed.close();
    await refused(url, /^the connection was refused$/);
  });

  it('refuses http', async () => {
    await refused(host.url('/plain.json').replace('https:', 'http:'), /^only https URLs are fetched$/);
  });
});
