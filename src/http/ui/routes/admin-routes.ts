import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import { CONSOLE_CLIENT_ID, ensureConsoleClient } from '../../../core/clients/console-client.js';
import type { Client } from '../../../core/model.js';
import {
  AdminApi,
  items,
  problemOf,
  str,
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
import type { Console, ConsoleRouter } from '../admin/console-router.js';
import { registerAuditLog } from '../admin/sections/audit.js';
import { registerClients } from '../admin/sections/clients.js';
import { registerDashboard } from '../admin/sections/dashboard.js';
import { registerGrants } from '../admin/sections/grants.js';
import { registerIdentityProviders } from '../admin/sections/identity-providers.js';
import { registerRegistrations } from '../admin/sections/registrations.js';
import { registerResources } from '../admin/sections/resources.js';
import { registerScopes } from '../admin/sections/scopes.js';
import { registerSigningKeys } from '../admin/sections/signing-keys.js';
import { registerUsers } from '../admin/sections/users.js';
import type { BrowserContext } from '../browser-context.js';
import { consoleErrorPage, type ConsoleFrame, type ConsoleSection } from '../pages/admin/console-layout.js';
import { field, forbiddenForm, frameFor, sendMessage, sendPage, type UiContext } from '../ui-context.js';

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

  const queryField = (request: FastifyRequest, name: string): string => {
    const value = (request.query as Record<string, unknown>)[name];
    return typeof value === 'string' ? value : '';
  };
  const offsetOf = (request: FastifyRequest): number => {
    const value = Number(queryField(request, 'offset'));
    return Number.isSafeInteger(value) && value > 0 ? value : 0;
  };
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

  const router: ConsoleRouter = {
    ui,
    adminPath,
    base,
    now,
    pageSize: PAGE_SIZE,
    page,
    action,
    failed,
    see,
    noticeOf(request, notices) {
      const done = (request.query as Record<string, unknown>)['done'];
      return typeof done === 'string' ? notices[done] : undefined;
    },
    asset(name, contentType, body) {
      // The content's hash in the name: a page always names the file it was written against, and a
      // browser may keep each for a year (a new release is a new name).
      const hash = createHash('sha256').update(body).digest('base64url').slice(0, 12);
      const path = `${adminPath}/assets/${name}-${hash}`;
      app.get(path, async function consoleAsset(_request, reply) {
        return reply
          .header('content-type', contentType)
          .header('cache-control', 'public, max-age=31536000, immutable')
          .send(body);
      });
      return path;
    },
    param: idParam,
    query: queryField,
    offset: offsetOf,
  };
  registerDashboard(router);
  registerClients(router);
  registerUsers(router);
  registerSigningKeys(router);
  registerAuditLog(router);
  registerGrants(router);
  registerScopes(router);
  registerResources(router);
  registerIdentityProviders(router);
  registerRegistrations(router);
}
