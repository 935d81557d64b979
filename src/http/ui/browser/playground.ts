// Runs in the browser (served at /assets/playground as a module script; compiled by tsc with the DOM
// library). It drives the OAuth playground and its callback page. Everything it shows is written with
// textContent, never innerHTML: tokens and server answers are data, not markup.

interface PlaygroundClient {
  id: string;
  name: string;
  public: boolean;
  grantTypes: string[];
  scopes: string[];
  redirectUris: string[];
  tokenType: string;
}

/** The authorization request this tab started, kept until its response arrives at the callback. */
interface Pending {
  flow: 'authorization_code' | 'implicit';
  clientId: string;
  isPublic: boolean;
  secret: string;
  verifier?: string;
  state: string;
}

interface Exchange {
  title: string;
  request: string;
  response: string;
  ok: boolean;
  claims?: string;
  at: string;
}

const PENDING_KEY = 'gatehouse.playground.pending';
const LOG_KEY = 'gatehouse.playground.log';
const REFRESH_KEY = 'gatehouse.playground.refresh';
const MAX_LOG = 30;

const basePath = document.body.dataset.basePath ?? '';
const endpoint = (path: string): string => new URL(basePath + path, location.origin).toString();
const callbackUrl = endpoint('/playground/callback');

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`missing #${id}`);
  return element as T;
}

function base64url(bytes: Uint8Array): string {
  let binary = '';
  bytes.forEach((byte) => (binary += String.fromCharCode(byte)));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomString(bytes = 32): string {
  const buffer = new Uint8Array(bytes);
  crypto.getRandomValues(buffer);
  return base64url(buffer);
}

/** RFC 7636 §4.2: BASE64URL(SHA256(ASCII(code_verifier))). */
async function s256(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

function decodeSegment(segment: string): unknown {
  const padded = segment
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(segment.length / 4) * 4, '=');
  const bytes = Uint8Array.from(atob(padded), (char) => char.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes)) as unknown;
}

/** A JWT's header and claims, decoded for reading (not verified: the resource server does that). */
function describeJwt(token: unknown): string | undefined {
  if (typeof token !== 'string') return undefined;
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const header = decodeSegment(parts[0] ?? '');
    const claims = decodeSegment(parts[1] ?? '') as Record<string, unknown>;
    const times = ['iat', 'nbf', 'exp']
      .filter((name) => typeof claims[name] === 'number')
      .map((name) => `${name} = ${new Date((claims[name] as number) * 1000).toISOString()}`);
    return [
      `header: ${JSON.stringify(header, null, 2)}`,
      `claims: ${JSON.stringify(claims, null, 2)}`,
      ...times,
    ].join('\n');
  } catch {
    return undefined;
  }
}

function loadLog(): Exchange[] {
  try {
    const parsed = JSON.parse(sessionStorage.getItem(LOG_KEY) ?? '[]') as unknown;
    return Array.isArray(parsed) ? (parsed as Exchange[]) : [];
  } catch {
    return [];
  }
}

function pre(text: string, className?: string): HTMLPreElement {
  const element = document.createElement('pre');
  element.textContent = text;
  if (className !== undefined) element.className = className;
  return element;
}

function renderEntry(entry: Exchange): HTMLElement {
  const article = document.createElement('article');
  article.className = 'exchange';
  const heading = document.createElement('h3');
  heading.textContent = `${entry.title} · ${entry.at.slice(11, 19)} UTC`;
  article.append(heading, pre(entry.request), pre(entry.response, entry.ok ? 'status-ok' : 'status-error'));
  if (entry.claims !== undefined) article.append(pre(`Access token, decoded\n${entry.claims}`));
  return article;
}

function renderLog(): void {
  const log = document.getElementById('log');
  if (log === null) return;
  log.replaceChildren(...loadLog().map(renderEntry));
}

function record(entry: Omit<Exchange, 'at'>): void {
  const full: Exchange = { ...entry, at: new Date().toISOString() };
  sessionStorage.setItem(LOG_KEY, JSON.stringify([full, ...loadLog()].slice(0, MAX_LOG)));
  renderLog();
}

const formEncode = (value: string): string => encodeURIComponent(value).replace(/%20/g, '+');
const HIDDEN_FIELDS = new Set(['password', 'client_secret']);

/** POSTs a grant to /token, the way a client would, and records both sides. */
async function tokenRequest(
  title: string,
  client: { id: string; isPublic: boolean },
  secret: string,
  form: Record<string, string>,
): Promise<Record<string, unknown> | undefined> {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) if (value !== '') body.set(name, value);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  // RFC 6749 §2.3.1: HTTP Basic with form-encoded id and secret; a public client names itself instead.
  if (!client.isPublic && secret !== '') {
    headers.authorization = `Basic ${btoa(`${formEncode(client.id)}:${formEncode(secret)}`)}`;
  } else {
    body.set('client_id', client.id);
  }
  const shownBody = [...body.entries()]
    .map(([name, value]) => `${name}=${HIDDEN_FIELDS.has(name) ? '••••••' : formEncode(value)}`)
    .join('&');
  const request = [
    `POST ${endpoint('/token')}`,
    ...(headers.authorization ? ['Authorization: Basic base64(client_id:client_secret)'] : []),
    'Content-Type: application/x-www-form-urlencoded',
    '',
    shownBody,
  ].join('\n');

  let response: Response;
  try {
    response = await fetch(endpoint('/token'), { method: 'POST', headers, body, credentials: 'omit' });
  } catch (error) {
    record({ title, request, response: `network error: ${String(error)}`, ok: false });
    return undefined;
  }
  const text = await response.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  const shownHeaders = ['content-type', 'cache-control', 'pragma', 'www-authenticate', 'retry-after']
    .filter((name) => response.headers.has(name))
    .map((name) => `${name}: ${response.headers.get(name) ?? ''}`);
  const claims = describeJwt(json?.access_token);
  record({
    title,
    request,
    response: [
      `HTTP ${response.status}`,
      ...shownHeaders,
      '',
      json ? JSON.stringify(json, null, 2) : text,
    ].join('\n'),
    ok: response.ok,
    ...(claims !== undefined ? { claims } : {}),
  });
  if (typeof json?.refresh_token === 'string') {
    sessionStorage.setItem(REFRESH_KEY, json.refresh_token);
    const field = document.getElementById('refresh-token') as HTMLInputElement | null;
    if (field !== null) field.value = json.refresh_token;
  }
  return json;
}

function initPlayground(): void {
  const clients = JSON.parse(byId('playground-clients').textContent ?? '[]') as PlaygroundClient[];
  const select = byId<HTMLSelectElement>('client');
  const secret = byId<HTMLInputElement>('secret');
  const scope = byId<HTMLInputElement>('scope');
  const facts = byId('client-facts');
  const refresh = byId<HTMLInputElement>('refresh-token');
  byId('callback-url').textContent = callbackUrl;
  refresh.value = sessionStorage.getItem(REFRESH_KEY) ?? '';
  const buttons = [...document.querySelectorAll<HTMLButtonElement>('button[data-grant]')];
  const current = (): PlaygroundClient | undefined => clients.find((client) => client.id === select.value);

  function update(): void {
    const client = current();
    scope.value = client?.scopes.join(' ') ?? '';
    secret.disabled = client?.public ?? false;
    const redirects = client?.redirectUris.includes(callbackUrl) ?? false;
    for (const button of buttons) {
      const grant = button.dataset.grant ?? '';
      const needsRedirect = grant === 'authorization_code' || grant === 'implicit';
      button.disabled =
        client === undefined || !client.grantTypes.includes(grant) || (needsRedirect && !redirects);
    }
    facts.textContent =
      client === undefined
        ? ''
        : `${client.public ? 'Public' : 'Confidential'} client · grants: ${client.grantTypes.join(', ')} · ` +
          `${client.tokenType} tokens · ` +
          (redirects
            ? 'the callback is registered.'
            : 'the callback is not registered, so the redirecting flows are off.');
  }
  select.addEventListener('change', update);
  update();
  renderLog();
  byId('clear-log').addEventListener('click', () => {
    sessionStorage.removeItem(LOG_KEY);
    renderLog();
  });

  async function startRedirectFlow(flow: Pending['flow'], client: PlaygroundClient): Promise<void> {
    const state = randomString(16);
    const params = new URLSearchParams({
      response_type: flow === 'authorization_code' ? 'code' : 'token',
      client_id: client.id,
      redirect_uri: callbackUrl,
      state,
    });
    if (scope.value.trim() !== '') params.set('scope', scope.value.trim());
    const pending: Pending = {
      flow,
      clientId: client.id,
      isPublic: client.public,
      secret: secret.value,
      state,
    };
    if (flow === 'authorization_code') {
      pending.verifier = randomString(32);
      params.set('code_challenge', await s256(pending.verifier));
      params.set('code_challenge_method', 'S256');
    }
    sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
    const url = `${endpoint('/authorize')}?${params.toString()}`;
    record({
      title: `Authorization request (${flow})`,
      request: `GET ${url}`,
      response: 'redirecting the browser…',
      ok: true,
    });
    location.assign(url);
  }

  for (const button of buttons) {
    button.addEventListener('click', () => {
      const client = current();
      if (client === undefined) return;
      const who = { id: client.id, isPublic: client.public };
      const grant = button.dataset.grant;
      if (grant === 'authorization_code' || grant === 'implicit') {
        void startRedirectFlow(grant, client);
      } else if (grant === 'password') {
        void tokenRequest('Password grant', who, secret.value, {
          grant_type: 'password',
          username: byId<HTMLInputElement>('pg-username').value,
          password: byId<HTMLInputElement>('pg-password').value,
          scope: scope.value.trim(),
        });
      } else if (grant === 'client_credentials') {
        void tokenRequest('Client credentials grant', who, secret.value, {
          grant_type: 'client_credentials',
          scope: scope.value.trim(),
        });
      } else if (grant === 'refresh_token') {
        void tokenRequest('Refresh', who, secret.value, {
          grant_type: 'refresh_token',
          refresh_token: refresh.value.trim(),
        });
      }
    });
  }
}

async function initCallback(): Promise<void> {
  // Read the response, then take it out of the address bar and history at once, so the token or code
  // is not left in the URL for bookmarks, screenshots or the next page's history (RFC 6749 §4.2.2).
  const query = new URLSearchParams(location.search);
  const fragment = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, '', location.pathname);

  const status = byId('callback-status');
  const params = fragment.has('access_token') || fragment.has('error') ? fragment : query;
  let pending: Pending | undefined;
  try {
    pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null') as Pending | undefined;
  } catch {
    pending = undefined;
  }
  sessionStorage.removeItem(PENDING_KEY);
  renderLog();
  const shown = JSON.stringify(Object.fromEntries(params.entries()), null, 2);
  const where = params === fragment ? 'URL fragment' : 'query';

  // The client's side of CSRF protection (RFC 6749 §10.12): only the response to our own request counts.
  if (!pending || params.get('state') !== pending.state) {
    status.textContent = 'This response does not belong to a request this tab made; it was ignored.';
    return;
  }
  if (params.has('error')) {
    record({
      title: 'Authorization error',
      request: `redirect to ${callbackUrl}`,
      response: `from the ${where}:\n${shown}`,
      ok: false,
    });
    status.textContent = `The authorization server answered: ${params.get('error') ?? ''}.`;
    return;
  }
  if (params.has('access_token')) {
    const claims = describeJwt(params.get('access_token'));
    record({
      title: 'Implicit grant response',
      request: `redirect to ${callbackUrl}#…`,
      response: `from the ${where}:\n${shown}`,
      ok: true,
      ...(claims !== undefined ? { claims } : {}),
    });
    status.textContent = 'Access token received in the URL fragment and removed from the address bar.';
    return;
  }
  const code = params.get('code');
  if (code === null || pending.verifier === undefined) {
    status.textContent = 'The response carried neither a code nor a token.';
    return;
  }
  record({
    title: 'Authorization response',
    request: `redirect to ${callbackUrl}?…`,
    response: `from the ${where}:\n${shown}`,
    ok: true,
  });
  status.textContent = 'Exchanging the authorization code at the token endpoint…';
  const tokens = await tokenRequest(
    'Authorization code grant',
    { id: pending.clientId, isPublic: pending.isPublic },
    pending.secret,
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: callbackUrl,
      code_verifier: pending.verifier,
    },
  );
  status.textContent =
    tokens && typeof tokens.access_token === 'string'
      ? 'Code exchanged: access token received.'
      : 'The token endpoint refused the code.';
}

if (document.body.dataset.page === 'playground') initPlayground();
if (document.body.dataset.page === 'playground-callback') void initCallback();
