import type { HttpResponse, TestHttpClient } from './https-client.js';

/** A browser without a browser: keeps cookies, replays them to whichever process it talks to. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  private readonly seen = new Set<string>();

  /** Every cookie value received so far (session cookies are credentials too). */
  values(): string[] {
    return [...this.seen];
  }

  private header(): Record<string, string> {
    const pairs = [...this.cookies].map(([name, value]) => `${name}=${value}`);
    return pairs.length > 0 ? { cookie: pairs.join('; ') } : {};
  }

  private keep(res: HttpResponse): HttpResponse {
    const setCookie = res.headers['set-cookie'];
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair] = line.split(';', 1);
      const eq = pair?.indexOf('=') ?? -1;
      if (pair !== undefined && eq > 0) {
        this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
        this.seen.add(pair.slice(eq + 1));
      }
    }
    return res;
  }

  async get(http: TestHttpClient, path: string): Promise<HttpResponse> {
    return this.keep(await http.request(path, { headers: this.header() }));
  }

  async post(
    http: TestHttpClient,
    path: string,
    form: Record<string, string | string[]>,
  ): Promise<HttpResponse> {
    return this.keep(await http.request(path, { form, headers: this.header() }));
  }
}

export function hidden(page: HttpResponse, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(page.text);
  if (match?.[1] === undefined)
    throw new Error(`no hidden field ${name} on the page (status ${page.status})`);
  return match[1]
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");
}
