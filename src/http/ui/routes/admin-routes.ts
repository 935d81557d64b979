import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import { CONSOLE_CLIENT_ID, ensureConsoleClient } from '../../../core/clients/console-client.js';
import type { Client } from '../../../core/model.js';
import {
  AdminApi,
  items,
  num,
  problemOf,
  str,
  strings,
  type ApiAnswer,
  type ApiProblem,
  type InProcessCaller,
} from '../admin/admin-api.js';
import {
  clearConsoleFlow,
  clearConsoleSession,
  consoleFlow,
  consoleSession,
  CONSOLE_FLOW_SECONDS,
  setConsoleFlow,
  setConsoleSession,
} from '../admin/console-cookies.js';
import type { BrowserContext } from '../browser-context.js';
import {
  auditPage,
  type AuditRow,
  clientPage,
  clientsPage,
  confirmDeleteClientPage,
  confirmRevokeKeyPage,
  consoleErrorPage,
  dashboardPage,
  newClientPage,
  newUserPage,
  signingKeysPage,
  userPage,
  usersPage,
  type ClientFormValues,
  type ClientRow,
  type ConsoleFrame,
  type ConsoleSection,
  type KeyView,
  type UserFormValues,
  type UserRow,
} from '../pages/admin-pages.js';
import {
  field,
  fields,
  forbiddenForm,
  frameFor,
  sendMessage,
  sendPage,
  type UiContext,
} from '../ui-context.js';

/**
 * The admin console at /admin (docs/decisions.md, decision 42): a first-party client of Gatehouse's own
 * /v1 API. It signs the administrator in with the authorization code flow and PKCE through /authorize
 * (the sign-in pages, second factor included), redeems the code at /token, and performs every read
 * and change as a /v1 request with that access token. The token says `admin` only for an administrator
 * (decision 29), so the console can do exactly what the API lets this person do.
 */

export interface AdminConsoleDependencies {
  /** Seals the console's cookies (console-cookies.ts): a subkey of the server secret for it alone. */
  key: Buffer;
  /** The root application's in-process request (Fastify's inject), which reaches /token and /v1. */
  callApi: InProcessCaller;
}

const PAGE_SIZE = 20;
const NOT_ADMIN_TITLE = 'Not an administrator';
const NOT_ADMIN = 'Your account is not an administrator.';
/** The access token is dropped this long before it expires, so no request is made with a dying one. */
const EXPIRY_MARGIN_SECONDS = 30;

/** Fixed notices a redirect names by a word (never text from the URL). */
const NOTICES: Readonly<Record<string, string>> = {
  'client-deleted': 'The client was deleted.',
  'user-created': 'The user was created.',
  'user-saved': 'The user was saved.',
  'user-disabled': 'The user was disabled and cannot sign in.',
  'user-enabled': 'The user was enabled.',
  'key-rotated': 'A new signing key is active.',
  'key-revoked': 'The key was revoked.',
  'client-saved': 'The client was saved.',
};

const noticeOf = (request: FastifyRequest): string | undefined => {
  const done = (request.query as Record<string, unknown>)['done'];
  return typeof done === 'string' ? NOTICES[done] : undefined;
};

const queryField = (request: FastifyRequest, name: string): string => {
  const value = (request.query as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : '';
};

const offsetOf = (request: FastifyRequest): number => {
  const value = Number(queryField(request, 'offset'));
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
};

/** The `sub` of a JWT access token this server just issued to the console (read, not verified: /token handed it over in process). */
function subjectOf(accessToken: string): string | undefined {
  const payload = accessToken.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const sub =
      typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>)['sub'] : undefined;
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}

function clientRow(value: unknown): ClientRow {
  return {
    id: str(value, 'client_id'),
    name: str(value, 'name'),
    public: str(value, 'public') === 'true',
    redirectUris: strings(value, 'redirect_uris'),
    scopes: strings(value, 'scopes'),
    grantTypes: strings(value, 'grant_types'),
    registration: str(value, 'registration'),
  };
}

const clientValues = (row: ClientRow): ClientFormValues => ({
  name: row.name,
  redirectUris: row.redirectUris.join('\n'),
  scopes: row.scopes.join(' '),
  grantTypes: row.grantTypes,
  public: row.public,
});

function userRow(value: unknown): UserRow {
  return {
    id: str(value, 'id'),
    username: str(value, 'username'),
    email: str(value, 'email'),
    name: str(value, 'name'),
    admin: str(value, 'admin') === 'true',
    disabled: str(value, 'disabled') === 'true',
    methods: items(value, 'sign_in_methods').map(
      (method) => `${str(method, 'method')} (${str(method, 'description')})`,
    ),
    sessions: num(value, 'sessions'),
  };
}

const userValues = (row: UserRow): UserFormValues => ({
  username: row.username,
  email: row.email,
  name: row.name,
  admin: row.admin,
});

function keyView(value: unknown): KeyView {
  return {
    kid: str(value, 'kid'),
    alg: str(value, 'alg'),
    status: str(value, 'status'),
    createdAt: str(value, 'created_at'),
    retiredAt: str(value, 'retired_at'),
    revokedAt: str(value, 'revoked_at'),
  };
}

/** The form's client fields as /v1/clients takes them; what is left empty is left to the API's defaults. */
function clientForm(body: unknown): { values: ClientFormValues; input: Record<string, unknown> } {
  const values: ClientFormValues = {
    name: field(body, 'name') ?? '',
    redirectUris: field(body, 'redirect_uris') ?? '',
    scopes: field(body, 'scopes') ?? '',
    grantTypes: fields(body, 'grant_types'),
    public: field(body, 'public') === 'true',
  };
  const split = (text: string) => text.split(/\s+/).filter((part) => part !== '');
  const input: Record<string, unknown> = {
    name: values.name,
    redirect_uris: split(values.redirectUris),
    scopes: split(values.scopes),
    public: values.public,
  };
  if (values.grantTypes.length > 0) input['grant_types'] = values.grantTypes;
  return { values, input };
}

function userForm(body: unknown): { values: UserFormValues; password: string } {
  return {
    values: {
      username: field(body, 'username') ?? '',
      email: field(body, 'email') ?? '',
      name: field(body, 'name') ?? '',
      admin: field(body, 'admin') === 'true',
    },
    password: field(body, 'password') ?? '',
  };
}

/** What a console route has once the administrator is signed in to it. */
interface Console {
  browser: BrowserContext;
  api: AdminApi;
  frame: ConsoleFrame;
}

export function registerAdminRoutes(
  app: FastifyInstance,
  ui: UiContext,
  deps: AdminConsoleDependencies,
): void {
  const base = ui.config.basePath;
  const adminPath = ENDPOINTS.adminConsole.path;
  const redirectUri = `${ui.config.issuer}${adminPath}/callback`;
  const now = () => ui.engine.clock.now();
  let consoleClient: Promise<Client> | undefined;

  /** The built-in client, made (or put right) once per process, on first use. */
  function ensureClient(): Promise<Client> {
    consoleClient ??= ensureConsoleClient(ui.engine.clients, {
      redirectUri,
      requireMfa: ui.config.adminRequireMfa,
    }).catch((error: unknown) => {
      consoleClient = undefined;
      throw error;
    });
    return consoleClient;
  }

  /** Starts the authorization code flow (RFC 6749 §4.1, RFC 7636) for this browser, to return to `next`. */
  async function startFlow(
    reply: FastifyReply,
    browser: BrowserContext,
    next: string,
  ): Promise<FastifyReply> {
    await ensureClient();
    const state = randomBytes(32).toString('base64url');
    const codeVerifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(codeVerifier).digest('base64url');
    setConsoleFlow(reply, deps.key, {
      state,
      codeVerifier,
      next,
      expiresAt: now() + CONSOLE_FLOW_SECONDS,
    });
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: CONSOLE_CLIENT_ID,
      redirect_uri: redirectUri,
      scope: 'admin',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    return reply.redirect(`${base}${ENDPOINTS.authorization.path}?${params.toString()}`, 303);
  }

  function notAdmin(reply: FastifyReply, browser?: BrowserContext): FastifyReply {
    clearConsoleSession(reply);
    return sendMessage(ui, reply, 403, NOT_ADMIN_TITLE, NOT_ADMIN, browser);
  }

  /**
   * The console for this request, or undefined when the reply is already decided: the flow started
   * (nobody signed in to the console, or another user than the token's is signed in now), or the 403
   * page (the user is no administrator, or no longer one).
   */
  async function open(
    request: FastifyRequest,
    reply: FastifyReply,
    next: string,
  ): Promise<Console | undefined> {
    const browser = await ui.browsers.load(request, reply);
    const session = consoleSession(request, deps.key, browser.browserId, now());
    if (browser.user === undefined || session === undefined || session.userId !== browser.user.id) {
      await startFlow(reply, browser, next);
      return undefined;
    }
    const api = new AdminApi(
      deps.callApi,
      `${base}${ENDPOINTS.managementApi.path}`,
      session.accessToken,
      request.ip,
    );
    // The administrator's own record, through the API like everything else: it says whether the token
    // still works (decision 29: the role is looked up at each request) and whether a second factor is set.
    const me = await api.get(`/users/${encodeURIComponent(session.userId)}`);
    if (me.status === 401) {
      await startFlow(reply, browser, next);
      return undefined;
    }
    if (me.status === 403) {
      notAdmin(reply, browser);
      return undefined;
    }
    const methods = items(me.body, 'sign_in_methods').map((method) => str(method, 'method'));
    const hasSecondFactor = methods.includes('totp') || methods.includes('passkey');
    const frame: ConsoleFrame = {
      ...frameFor(ui, browser),
      csrfToken: browser.csrfToken,
      secondFactorPrompt: !ui.config.adminRequireMfa && !hasSecondFactor,
    };
    return { browser, api, frame };
  }

  /**
   * A console page for GET: `render` runs once the console is open. A POST checks the CSRF token
   * first (the forms of decision 6's pages carry it), and sends a browser without a console session
   * through sign-in back to the page it came from.
   */
  function page(
    path: string,
    render: (request: FastifyRequest, reply: FastifyReply, c: Console) => Promise<FastifyReply>,
  ) {
    app.get(path, async function consolePage(request, reply) {
      const c = await open(request, reply, request.url.slice(base.length));
      return c === undefined ? reply : render(request, reply, c);
    });
  }

  function action(
    path: string,
    back: (request: FastifyRequest) => string,
    run: (request: FastifyRequest, reply: FastifyReply, c: Console) => Promise<FastifyReply>,
  ) {
    app.post(path, async function consoleAction(request, reply) {
      if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token')))
        return forbiddenForm(ui, reply);
      const c = await open(request, reply, back(request));
      return c === undefined ? reply : run(request, reply, c);
    });
  }

  /** An answer that is no success: the token's end restarts sign-in, a lost role is the 403 page, anything else the error page. */
  async function failed(
    request: FastifyRequest,
    reply: FastifyReply,
    c: Console,
    answer: ApiAnswer,
    section: ConsoleSection,
  ): Promise<FastifyReply> {
    const problem = problemOf(answer) as ApiProblem;
    // A POST's path may have no page: sign-in then returns to the dashboard.
    if (answer.status === 401) {
      return startFlow(
        reply,
        c.browser,
        request.method === 'GET' ? request.url.slice(base.length) : adminPath,
      );
    }
    if (answer.status === 403) return notAdmin(reply, c.browser);
    return sendPage(reply, answer.status, consoleErrorPage(c.frame, section, problem));
  }

  const idParam = (request: FastifyRequest, name = 'id'): string =>
    String((request.params as Record<string, unknown>)[name] ?? '');
  const see = (reply: FastifyReply, path: string, done?: string) =>
    reply.redirect(`${base}${path}${done === undefined ? '' : `?done=${done}`}`, 303);

  // ---- sign-in: the callback of the authorization code flow

  app.get(`${adminPath}/callback`, async function consoleCallback(request, reply) {
    const browser = await ui.browsers.load(request, reply);
    const flow = consoleFlow(request, deps.key, now());
    clearConsoleFlow(reply);
    const query = request.query as Record<string, unknown>;
    if (flow === undefined || typeof query['state'] !== 'string' || query['state'] !== flow.state) {
      return sendMessage(
        ui,
        reply,
        400,
        'Sign-in expired',
        'This sign-in to the admin console expired or was already used. Open the console again.',
        browser,
      );
    }
    // Decision 29: a request for `admin` alone by someone who is no administrator is refused with
    // invalid_scope (RFC 6749 §4.1.2.1), and no code is issued at all.
    if (query['error'] === 'invalid_scope' || query['error'] === 'access_denied')
      return notAdmin(reply, browser);
    if (typeof query['code'] !== 'string') {
      return sendMessage(
        ui,
        reply,
        400,
        'Sign-in failed',
        'The sign-in to the admin console did not complete.',
        browser,
      );
    }
    await ensureClient();
    const answer = await deps.callApi({
      method: 'POST',
      url: `${base}${ENDPOINTS.token.path}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      remoteAddress: request.ip,
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code: query['code'],
        redirect_uri: redirectUri,
        client_id: CONSOLE_CLIENT_ID,
        code_verifier: flow.codeVerifier,
      }).toString(),
    });
    let token: Record<string, unknown> = {};
    try {
      token = JSON.parse(answer.body) as Record<string, unknown>;
    } catch {
      // Not JSON: handled as a failed exchange below.
    }
    const accessToken = token['access_token'];
    if (answer.statusCode !== 200 || typeof accessToken !== 'string') {
      return sendMessage(
        ui,
        reply,
        400,
        'Sign-in failed',
        'The sign-in to the admin console did not complete. Open the console again.',
        browser,
      );
    }
    const scope = typeof token['scope'] === 'string' ? token['scope'].split(' ') : [];
    const userId = subjectOf(accessToken);
    if (!scope.includes('admin') || userId === undefined) return notAdmin(reply, browser);
    const expiresIn = typeof token['expires_in'] === 'number' ? token['expires_in'] : 300;
    setConsoleSession(
      reply,
      deps.key,
      browser.browserId,
      { accessToken, userId, expiresAt: now() + Math.max(1, expiresIn - EXPIRY_MARGIN_SECONDS) },
      now(),
    );
    const next = flow.next.startsWith(`${adminPath}`) ? flow.next : adminPath;
    return reply.redirect(`${base}${next}`, 303);
  });

  // ---- dashboard

  page(adminPath, async (request, reply, c) => {
    const [keys, clients, users] = await Promise.all([
      c.api.get('/signing-keys'),
      c.api.get('/clients?limit=1'),
      c.api.get('/users?limit=1'),
    ]);
    if (keys.status !== 200) return failed(request, reply, c, keys, 'dashboard');
    return sendPage(
      reply,
      200,
      dashboardPage(c.frame, {
        keys: items(keys.body).map(keyView),
        clients: num(clients.body, 'total'),
        users: num(users.body, 'total'),
        now: now(),
      }),
    );
  });

  // ---- clients

  page(`${adminPath}/clients`, async (request, reply, c) => {
    const name = queryField(request, 'name').trim();
    const offset = offsetOf(request);
    const params = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset) });
    if (name !== '') params.set('name', name);
    const answer = await c.api.get(`/clients?${params.toString()}`);
    if (answer.status !== 200) return failed(request, reply, c, answer, 'clients');
    return sendPage(
      reply,
      200,
      clientsPage(c.frame, {
        rows: items(answer.body).map(clientRow),
        name,
        offset,
        limit: PAGE_SIZE,
        total: num(answer.body, 'total') ?? 0,
        ...(noticeOf(request) !== undefined ? { notice: noticeOf(request) } : {}),
      }),
    );
  });

  const emptyClient: ClientFormValues = {
    name: '',
    redirectUris: '',
    scopes: '',
    grantTypes: [],
    public: false,
  };
  page(`${adminPath}/clients/new`, async (_request, reply, c) =>
    sendPage(reply, 200, newClientPage(c.frame, emptyClient)),
  );

  action(
    `${adminPath}/clients/new`,
    () => `${adminPath}/clients/new`,
    async (request, reply, c) => {
      const { values, input } = clientForm(request.body);
      const answer = await c.api.request('POST', '/clients', input);
      if (answer.status === 401 || answer.status === 403) return failed(request, reply, c, answer, 'clients');
      const problem = problemOf(answer);
      if (problem !== undefined)
        return sendPage(reply, answer.status, newClientPage(c.frame, values, problem));
      const row = clientRow(answer.body);
      const secret = str(answer.body, 'client_secret');
      return sendPage(
        reply,
        201,
        clientPage(c.frame, {
          client: row,
          values: clientValues(row),
          notice: 'The client was created.',
          ...(secret !== '' ? { secret } : {}),
        }),
      );
    },
  );

  const clientPath = `${adminPath}/clients/:id`;
  const clientBack = (request: FastifyRequest) =>
    `${adminPath}/clients/${encodeURIComponent(idParam(request))}`;

  page(clientPath, async (request, reply, c) => {
    const answer = await c.api.get(`/clients/${encodeURIComponent(idParam(request))}`);
    if (answer.status !== 200) return failed(request, reply, c, answer, 'clients');
    const row = clientRow(answer.body);
    const notice = noticeOf(request);
    return sendPage(
      reply,
      200,
      clientPage(c.frame, {
        client: row,
        values: clientValues(row),
        ...(notice !== undefined ? { notice } : {}),
      }),
    );
  });

  action(clientPath, clientBack, async (request, reply, c) => {
    const id = encodeURIComponent(idParam(request));
    const current = await c.api.get(`/clients/${id}`);
    if (current.status !== 200) return failed(request, reply, c, current, 'clients');
    const { values, input } = clientForm(request.body);
    const answer = await c.api.request('PATCH', `/clients/${id}`, input);
    if (answer.status === 401 || answer.status === 403 || answer.status === 404) {
      return failed(request, reply, c, answer, 'clients');
    }
    const problem = problemOf(answer);
    if (problem !== undefined) {
      return sendPage(
        reply,
        answer.status,
        clientPage(c.frame, { client: clientRow(current.body), values, problem }),
      );
    }
    const secret = str(answer.body, 'client_secret');
    if (secret === '') return see(reply, clientBack(request), 'client-saved');
    const row = clientRow(answer.body);
    return sendPage(
      reply,
      200,
      clientPage(c.frame, {
        client: row,
        values: clientValues(row),
        secret,
        notice: NOTICES['client-saved'],
      }),
    );
  });

  action(`${clientPath}/rotate-secret`, clientBack, async (request, reply, c) => {
    const id = encodeURIComponent(idParam(request));
    const answer = await c.api.request('POST', `/clients/${id}/rotate-secret`);
    if (answer.status !== 201) return failed(request, reply, c, answer, 'clients');
    const current = await c.api.get(`/clients/${id}`);
    if (current.status !== 200) return failed(request, reply, c, current, 'clients');
    const row = clientRow(current.body);
    return sendPage(
      reply,
      200,
      clientPage(c.frame, {
        client: row,
        values: clientValues(row),
        secret: str(answer.body, 'client_secret'),
        notice: 'A new secret was made; the old one no longer works.',
      }),
    );
  });

  page(`${clientPath}/delete`, async (request, reply, c) => {
    const answer = await c.api.get(`/clients/${encodeURIComponent(idParam(request))}`);
    if (answer.status !== 200) return failed(request, reply, c, answer, 'clients');
    return sendPage(reply, 200, confirmDeleteClientPage(c.frame, clientRow(answer.body)));
  });

  action(`${clientPath}/delete`, clientBack, async (request, reply, c) => {
    const answer = await c.api.request('DELETE', `/clients/${encodeURIComponent(idParam(request))}`);
    if (answer.status !== 204) return failed(request, reply, c, answer, 'clients');
    return see(reply, `${adminPath}/clients`, 'client-deleted');
  });

  // ---- users

  page(`${adminPath}/users`, async (request, reply, c) => {
    const username = queryField(request, 'username').trim();
    const offset = offsetOf(request);
    const params = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset) });
    if (username !== '') params.set('username', username);
    const answer = await c.api.get(`/users?${params.toString()}`);
    if (answer.status !== 200) return failed(request, reply, c, answer, 'users');
    const notice = noticeOf(request);
    return sendPage(
      reply,
      200,
      usersPage(c.frame, {
        rows: items(answer.body).map(userRow),
        username,
        offset,
        limit: PAGE_SIZE,
        total: num(answer.body, 'total') ?? 0,
        ...(notice !== undefined ? { notice } : {}),
      }),
    );
  });

  const emptyUser: UserFormValues = { username: '', email: '', name: '', admin: false };
  page(`${adminPath}/users/new`, async (_request, reply, c) =>
    sendPage(reply, 200, newUserPage(c.frame, emptyUser)),
  );

  action(
    `${adminPath}/users/new`,
    () => `${adminPath}/users/new`,
    async (request, reply, c) => {
      const { values, password } = userForm(request.body);
      const answer = await c.api.request('POST', '/users', {
        username: values.username,
        password,
        ...(values.email !== '' ? { email: values.email } : {}),
        ...(values.name !== '' ? { name: values.name } : {}),
        admin: values.admin,
      });
      if (answer.status === 401 || answer.status === 403) return failed(request, reply, c, answer, 'users');
      const problem = problemOf(answer);
      if (problem !== undefined) return sendPage(reply, answer.status, newUserPage(c.frame, values, problem));
      return see(reply, `${adminPath}/users/${encodeURIComponent(str(answer.body, 'id'))}`, 'user-created');
    },
  );

  const userPath = `${adminPath}/users/:id`;
  const userBack = (request: FastifyRequest) => `${adminPath}/users/${encodeURIComponent(idParam(request))}`;

  page(userPath, async (request, reply, c) => {
    const answer = await c.api.get(`/users/${encodeURIComponent(idParam(request))}`);
    if (answer.status !== 200) return failed(request, reply, c, answer, 'users');
    const row = userRow(answer.body);
    const notice = noticeOf(request);
    return sendPage(
      reply,
      200,
      userPage(c.frame, { user: row, values: userValues(row), ...(notice !== undefined ? { notice } : {}) }),
    );
  });

  action(userPath, userBack, async (request, reply, c) => {
    const id = encodeURIComponent(idParam(request));
    const current = await c.api.get(`/users/${id}`);
    if (current.status !== 200) return failed(request, reply, c, current, 'users');
    const { values, password } = userForm(request.body);
    const answer = await c.api.request('PATCH', `/users/${id}`, {
      username: values.username,
      email: values.email === '' ? null : values.email,
      name: values.name === '' ? null : values.name,
      admin: values.admin,
      ...(password !== '' ? { password } : {}),
    });
    if (answer.status === 401 || answer.status === 403 || answer.status === 404) {
      return failed(request, reply, c, answer, 'users');
    }
    const problem = problemOf(answer);
    if (problem !== undefined) {
      return sendPage(
        reply,
        answer.status,
        userPage(c.frame, { user: userRow(current.body), values, problem }),
      );
    }
    return see(reply, userBack(request), 'user-saved');
  });

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    action(`${userPath}/${verb}`, userBack, async (request, reply, c) => {
      const answer = await c.api.request('PATCH', `/users/${encodeURIComponent(idParam(request))}`, {
        disabled,
      });
      if (answer.status >= 300) return failed(request, reply, c, answer, 'users');
      return see(reply, userBack(request), disabled ? 'user-disabled' : 'user-enabled');
    });
  }

  // ---- signing keys

  page(`${adminPath}/signing-keys`, async (request, reply, c) => {
    const answer = await c.api.get('/signing-keys');
    if (answer.status !== 200) return failed(request, reply, c, answer, 'signing-keys');
    const notice = noticeOf(request);
    return sendPage(
      reply,
      200,
      signingKeysPage(c.frame, {
        keys: items(answer.body).map(keyView),
        now: now(),
        ...(notice !== undefined ? { notice } : {}),
      }),
    );
  });

  action(
    `${adminPath}/signing-keys/rotate`,
    () => `${adminPath}/signing-keys`,
    async (request, reply, c) => {
      const answer = await c.api.request('POST', '/signing-keys');
      if (answer.status !== 201) return failed(request, reply, c, answer, 'signing-keys');
      return see(reply, `${adminPath}/signing-keys`, 'key-rotated');
    },
  );

  const revokePath = `${adminPath}/signing-keys/:kid/revoke`;
  page(revokePath, async (request, reply, c) => {
    const answer = await c.api.get(`/signing-keys/${encodeURIComponent(idParam(request, 'kid'))}`);
    if (answer.status !== 200) return failed(request, reply, c, answer, 'signing-keys');
    return sendPage(reply, 200, confirmRevokeKeyPage(c.frame, keyView(answer.body)));
  });

  action(
    revokePath,
    () => `${adminPath}/signing-keys`,
    async (request, reply, c) => {
      const answer = await c.api.request(
        'POST',
        `/signing-keys/${encodeURIComponent(idParam(request, 'kid'))}/revoke`,
      );
      if (answer.status !== 201) return failed(request, reply, c, answer, 'signing-keys');
      return see(reply, `${adminPath}/signing-keys`, 'key-revoked');
    },
  );

  // ---- audit log: /v1/audit-events (issue 30), shown once the API has it

  page(`${adminPath}/audit`, async (request, reply, c) => {
    const type = queryField(request, 'type').trim();
    const cursor = queryField(request, 'cursor');
    const params = new URLSearchParams({ limit: '50' });
    if (type !== '') params.set('type', type);
    if (cursor !== '') params.set('cursor', cursor);
    const answer = await c.api.get(`/audit-events?${params.toString()}`);
    if (answer.status === 404) {
      return sendPage(reply, 200, auditPage(c.frame, { available: false, rows: [], type }));
    }
    if (answer.status !== 200) return failed(request, reply, c, answer, 'audit');
    const nextCursor = str(answer.body, 'next_cursor');
    return sendPage(
      reply,
      200,
      auditPage(c.frame, {
        available: true,
        type,
        rows: items(answer.body).map(auditRow),
        ...(nextCursor !== '' ? { nextCursor } : {}),
      }),
    );
  });
}

/**
 * One event of /v1/audit-events as the page lists it (decision 41's shape): when, what, who (a user, a
 * client, or the command line), on what (the client or user it concerns, and its detail), from where.
 */
function auditRow(event: Record<string, unknown>): AuditRow {
  const actor = typeof event.actor === 'object' && event.actor !== null ? event.actor : undefined;
  const actorType = str(actor, 'type');
  const on = [
    str(event, 'client_id') && `client ${str(event, 'client_id')}`,
    str(event, 'user_id') && `user ${str(event, 'user_id')}`,
  ]
    .filter((part) => part !== '')
    .join(', ');
  return {
    time: str(event, 'at'),
    type: str(event, 'type'),
    actor: actorType === 'cli' ? 'command line' : actorType === '' ? '' : `${actorType} ${str(actor, 'id')}`,
    target: [on, str(event, 'detail')].filter((part) => part !== '').join(': '),
    address: str(event, 'address'),
  };
}
