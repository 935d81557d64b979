import { Agent, request as httpsRequest } from 'node:https';

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: unknown;
}

export interface RequestOptions {
  method?: string;
  /** A list is the header sent once per value. */
  headers?: Record<string, string | string[]>;
  /** Sent as application/x-www-form-urlencoded; arrays repeat the parameter. */
  form?: Record<string, string | string[]>;
  body?: string | Buffer;
}

export function formBody(form: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(form)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, item);
  }
  return params.toString();
}

export function basicAuth(id: string, secret: string): string {
  const encode = (part: string) => encodeURIComponent(part).replace(/%20/g, '+');
  return 'Basic ' + Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64');
}

/** POST /token's request: a form, with HTTP Basic when credentials are given. */
export function tokenRequest(
  form: Record<string, string | string[]>,
  credentials?: { id: string; secret: string },
): RequestOptions {
  return {
    form,
    headers: credentials ? { authorization: basicAuth(credentials.id, credentials.secret) } : {},
  };
}

/**
 * How a test talks to its server: over a real HTTPS connection (HttpsClient) or handed to the app in
 * process (InjectClient, inject-client.ts). Both answer with the same shapes.
 */
export interface TestHttpClient {
  /** Where the server listens, for code outside the test; an in-process client has none and throws. */
  readonly baseUrl: string;
  request(path: string, options?: RequestOptions): Promise<HttpResponse>;
  /** POST /token with a form, authenticating with HTTP Basic when credentials are given. */
  token(
    form: Record<string, string | string[]>,
    credentials?: { id: string; secret: string },
  ): Promise<HttpResponse>;
  close(): void;
}

/** Parses a response body as JSON; undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A real HTTPS client that trusts only the server's certificate. */
export class HttpsClient implements TestHttpClient {
  private readonly agent: Agent;

  constructor(
    readonly baseUrl: string,
    ca: string,
    /** The address to connect from (e.g. 127.0.0.2), for tests of per-source limits. */
    localAddress?: string,
  ) {
    this.agent = new Agent({
      ca,
      keepAlive: true,
      maxSockets: 64,
      ...(localAddress ? { localAddress } : {}),
    });
  }

  request(path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    const headers: Record<string, string | string[]> = { ...options.headers };
    let body = options.body;
    if (options.form !== undefined) {
      body = formBody(options.form);
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
    }
    const url = new URL(this.baseUrl + path);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        url,
        { method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseJson(text) });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  token(
    form: Record<string, string | string[]>,
    credentials?: { id: string; secret: string },
  ): Promise<HttpResponse> {
    return this.request('/token', tokenRequest(form, credentials));
  }

  close(): void {
    this.agent.destroy();
  }
}
