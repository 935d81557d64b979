import type { HttpResponse } from '../helpers/https-client.js';
import type { TestServer } from '../helpers/server.js';

/** A minimal cookie-keeping form client for the browser pages, without a browser. */
export class FormBrowser {
  private cookie: string | undefined;

  constructor(private readonly server: TestServer) {}

  /** The cookie this browser holds (name=value), to replay it elsewhere. */
  get currentCookie(): string | undefined {
    return this.cookie;
  }

  set currentCookie(value: string | undefined) {
    this.cookie = value;
  }

  private remember(res: HttpResponse): HttpResponse {
    const setCookie = res.headers['set-cookie'];
    const first = Array.isArray(setCookie) ? setCookie[0] : setCookie;
    if (first !== undefined) this.cookie = first.split(';', 1)[0];
    return res;
  }

  private headers(): Record<string, string> {
    return this.cookie === undefined ? {} : { cookie: this.cookie };
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
