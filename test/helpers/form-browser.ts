import type { HttpResponse } from './https-client.js';
import type { TestServer } from './server.js';

const BROWSER_COOKIE = '__Host-gatehouse';

/** A minimal cookie-keeping form client for the browser pages, without a browser. */
export class FormBrowser {
  /** Cookies by name, as the server last set them. */
  private readonly jar = new Map<string, string>();

  constructor(private readonly server: Pick<TestServer, 'http'>) {}

  /** The browser cookie this browser holds (name=value), to replay it elsewhere. */
  get currentCookie(): string | undefined {
    const value = this.jar.get(BROWSER_COOKIE);
    return value === undefined ? undefined : `${BROWSER_COOKIE}=${value}`;
  }

  set currentCookie(value: string | undefined) {
    if (value === undefined) {
      this.jar.delete(BROWSER_COOKIE);
      return;
    }
    const [name = '', ...rest] = value.split('=');
    this.jar.set(name, rest.join('='));
  }

  /** Whether the browser holds a cookie of this name. */
  hasCookie(name: string): boolean {
    return this.jar.has(name);
  }

  private remember(res: HttpResponse): HttpResponse {
    const setCookie = res.headers['set-cookie'];
    const all = Array.isArray(setCookie) ? setCookie : setCookie === undefined ? [] : [setCookie];
    for (const line of all) {
      const [pair = '', ...attributes] = line.split(';');
      const [name = '', ...rest] = pair.trim().split('=');
      const expired = attributes.some((attribute) => {
        const [key = '', value = ''] = attribute.trim().split('=');
        const lower = key.toLowerCase();
        return (
          (lower === 'max-age' && Number(value) <= 0) ||
          (lower === 'expires' && Date.parse(value) <= Date.now())
        );
      });
      if (expired) this.jar.delete(name);
      else this.jar.set(name, rest.join('='));
    }
    return res;
  }

  private headers(): Record<string, string> {
    if (this.jar.size === 0) return {};
    return { cookie: [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ') };
  }

  async get(path: string): Promise<HttpResponse> {
    return this.remember(await this.server.http.request(path, { headers: this.headers() }));
  }

  async post(path: string, form: Record<string, string | string[]>): Promise<HttpResponse> {
    return this.remember(await this.server.http.request(path, { form, headers: this.headers() }));
  }

  /** The value of a hidden input on a page. */
  static hidden(page: HttpResponse, name: string): string {
    const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(page.text);
    if (match?.[1] === undefined) throw new Error(`no hidden field ${name}`);
    return match[1]
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'");
  }

  /** Signs in through the sign-in page; returns the answer to the POST. */
  async signIn(username: string, password: string, next = '/account/apps'): Promise<HttpResponse> {
    const form = await this.get(`/sign-in?next=${encodeURIComponent(next)}`);
    return this.post('/sign-in', {
      csrf_token: FormBrowser.hidden(form, 'csrf_token'),
      username,
      password,
      next: FormBrowser.hidden(form, 'next'),
    });
  }
}
