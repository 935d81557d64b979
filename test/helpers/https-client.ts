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
  headers?: Record<string, string>;
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

/** A real HTTPS client that trusts only the server's certificate. */
export class HttpsClient {
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
    const headers: Record<string, string> = { ...options.headers };
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
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  /** POST /token with a form, authenticating with HTTP Basic when credentials are given. */
  token(
    form: Record<string, string | string[]>,
    credentials?: { id: string; secret: string },
  ): Promise<HttpResponse> {
    return this.request('/token', {
      form,
      headers: credentials ? { authorization: basicAuth(credentials.id, credentials.secret) } : {},
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
