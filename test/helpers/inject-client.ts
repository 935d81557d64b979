import type { FastifyInstance, InjectOptions } from 'fastify';
import {
  formBody,
  parseJson,
  tokenRequest,
  type HttpResponse,
  type RequestOptions,
  type TestHttpClient,
} from './https-client.js';

/** Only the path and query of a request are sent; this origin is a placeholder to parse them by. */
const PLACEHOLDER_ORIGIN = 'https://gatehouse.inject';

/**
 * Thrown when a test on an in-process server hands its address to code outside the test: nothing
 * listens there. Such a test starts its server with `{ transport: 'https' }`.
 */
export function noAddressError(what: string): Error {
  return new Error(
    `${what}: this test server runs in process (transport 'inject') and listens nowhere; ` +
      `start it with startTestServer(backend, overrides, { transport: 'https' }) to reach it from ` +
      `outside code (a real client, a browser, another process, a socket)`,
  );
}

/**
 * A client that hands each request to the app in process (Fastify's inject()): no socket, no TLS
 * handshake, the same routes and hooks. Its answers have HttpsClient's shapes: the headers as Node's
 * HTTP client gives them (set-cookie always a list, other repeated headers joined), the body as text
 * and as JSON.
 */
export class InjectClient implements TestHttpClient {
  constructor(
    private readonly app: FastifyInstance,
    /** The server's base path (config.basePath), which HttpsClient's base URL carries. */
    private readonly basePath: string,
    /** The address requests come from (inject's remoteAddress), as HttpsClient's localAddress. */
    private readonly remoteAddress = '127.0.0.1',
  ) {}

  get baseUrl(): string {
    throw noAddressError('server.http.baseUrl');
  }

  async request(path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    const headers: Record<string, string | string[]> = { ...options.headers };
    let body = options.body;
    if (options.form !== undefined) {
      body = formBody(options.form);
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
    }
    // Parsed as HttpsClient parses it, so that the path and query are normalised and escaped alike.
    const url = new URL(PLACEHOLDER_ORIGIN + this.basePath + path);
    const res = await this.app.inject({
      // Any method string, as HttpsClient sends it: tests send unknown methods on purpose.
      method: (options.method ?? (body === undefined ? 'GET' : 'POST')) as InjectOptions['method'],
      url: url.pathname + url.search,
      headers,
      ...(body === undefined ? {} : { payload: body }),
      remoteAddress: this.remoteAddress,
    });
    const text = res.rawPayload.toString('utf8');
    return { status: res.statusCode, headers: asNodeClientHeaders(res.headers), text, json: parseJson(text) };
  }

  token(
    form: Record<string, string | string[]>,
    credentials?: { id: string; secret: string },
  ): Promise<HttpResponse> {
    return this.request('/token', tokenRequest(form, credentials));
  }

  close(): void {
    // Nothing to close: no connections.
  }
}

/** Headers as Node's HTTP client presents them (IncomingMessage.headers): set-cookie is always a list. */
function asNodeClientHeaders(
  headers: Record<string, string | string[] | number | undefined>,
): HttpResponse['headers'] {
  const result: HttpResponse['headers'] = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value.map(String) : [String(value)];
    result[name] = name === 'set-cookie' ? values : values.join(', ');
  }
  return result;
}
