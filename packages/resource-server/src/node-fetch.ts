import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** The subset of fetch the library uses (and jose's customFetch passes). */
export type FetchLike = (
  url: string,
  init: {
    method?: string;
    headers?: Headers | Record<string, string>;
    body?: string;
    signal?: AbortSignal;
  },
) => Promise<Response>;

export interface NodeFetch {
  fetch: FetchLike;
  close(): void;
}

/**
 * fetch over node:https with an explicit CA (a private or development certificate authority, which
 * Node's global fetch cannot be given) and keep-alive connections.
 */
export function nodeFetch(ca?: string | Buffer | Array<string | Buffer>): NodeFetch {
  const httpsAgent = new HttpsAgent({ keepAlive: true, ...(ca === undefined ? {} : { ca }) });
  const httpAgent = new HttpAgent({ keepAlive: true });
  const fetch: FetchLike = (url, init) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const headers =
        init.headers instanceof Headers ? Object.fromEntries(init.headers.entries()) : { ...init.headers };
      const secure = target.protocol === 'https:';
      const send = secure ? httpsRequest : httpRequest;
      const req = send(
        target,
        { method: init.method ?? 'GET', headers, agent: secure ? httpsAgent : httpAgent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const status = res.statusCode ?? 500;
            const responseHeaders = new Headers();
            for (const [name, value] of Object.entries(res.headers)) {
              for (const item of [value ?? []].flat()) responseHeaders.append(name, item);
            }
            const body = [101, 204, 205, 304].includes(status) ? null : Buffer.concat(chunks);
            resolve(new Response(body, { status, headers: responseHeaders }));
          });
        },
      );
      req.on('error', reject);
      init.signal?.addEventListener('abort', () => req.destroy(new Error('request aborted')), { once: true });
      if (init.body !== undefined) req.write(init.body);
      req.end();
    });
  return {
    fetch,
    close() {
      httpsAgent.destroy();
      httpAgent.destroy();
    },
  };
}
