import { Agent, request } from 'node:https';

/** The request options openid-client and oauth4webapi hand to a custom fetch. */
export interface FetchOptions {
  body?: ArrayBuffer | ReadableStream | string | Uint8Array | URLSearchParams | null;
  headers?: Record<string, string>;
  method?: string;
  signal?: AbortSignal;
}

/**
 * A Fetch API function over node:https that trusts `ca` (the test server's self-signed certificate)
 * and nothing else: Node's own fetch trusts only its root store and NODE_EXTRA_CA_CERTS, read once at
 * start-up. Redirects are never followed (the libraries ask for `redirect: 'manual'`).
 */
export function trustingFetch(ca: string): {
  fetch: (url: string, options: FetchOptions) => Promise<Response>;
  close(): void;
} {
  const agent = new Agent({ ca, keepAlive: true });
  const fetch = async (url: string, options: FetchOptions): Promise<Response> => {
    const body = await bodyBytes(options.body);
    return new Promise<Response>((resolve, reject) => {
      const req = request(
        new URL(url),
        {
          agent,
          method: options.method ?? 'GET',
          headers: { ...options.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
          signal: options.signal,
          // localhost may resolve to ::1 first; the test servers listen on 127.0.0.1.
          family: 4,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const headers = new Headers();
            for (const [name, value] of Object.entries(res.headers)) {
              for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
                headers.append(name, item);
              }
            }
            const status = res.statusCode ?? 500;
            const nullBody = status === 204 || status === 304;
            resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status, headers }));
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
  return { fetch, close: () => agent.destroy() };
}

async function bodyBytes(body: FetchOptions['body']): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  return Buffer.from(await new Response(body).arrayBuffer());
}
