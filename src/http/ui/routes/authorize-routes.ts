import type { FastifyInstance, FastifyReply } from 'fastify';
import { GRANT_LIFETIMES } from '../../../core/authorize/authorization-service.js';
import {
  validateAuthorizationRequest,
  type AuthorizationRequest,
  type AuthorizationValidation,
} from '../../../core/authorize/request.js';
import { isSubset } from '../../../core/scopes.js';
import type { BrowserContext } from '../browser-context.js';
import { allowFormTarget } from '../content-security-policy.js';
import { consentPage, LIFETIME_OPTIONS } from '../pages/consent-page.js';
import { signInPage } from '../pages/sign-in-page.js';
import {
  field,
  fields,
  forbiddenForm,
  frameFor,
  rawQuery,
  sendMessage,
  sendPage,
  type UiContext,
} from '../ui-context.js';

const DEFAULT_LIFETIME = '2592000';

/** Where the user is sent back to, as the consent page names it. */
function returnTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.host === '' ? url.protocol : url.host;
}

function parseLifetime(value: string | undefined): number | null | undefined {
  if (value === 'forever') return null;
  const seconds = Number(value);
  return GRANT_LIFETIMES.includes(seconds) ? seconds : undefined;
}

/**
 * GET /authorize (RFC 6749 §3.1, §4.1.1, §4.2.1) and POST /consent, where the user's answer arrives.
 * Nothing is redirected before the client and its redirect URI are verified (§4.1.2.1).
 */
export function registerAuthorizeRoutes(app: FastifyInstance, ui: UiContext): void {
  const validate = (query: string) =>
    validateAuthorizationRequest(query, ui.storage.clients, { allowPlainPkce: ui.config.allowPlainPkce });

  /** Answers a request that failed validation; undefined when it is valid. */
  function answerInvalid(reply: FastifyReply, validation: AuthorizationValidation): FastifyReply | undefined {
    if (validation.outcome === 'error-page') {
      return sendMessage(ui, reply, 400, 'This request cannot be completed', validation.description);
    }
    if (validation.outcome === 'error-redirect') return reply.redirect(validation.location, 302);
    return undefined;
  }

  /** The sign-in page, carrying the authorization request back to /authorize, validated again there. */
  function signInToResume(
    reply: FastifyReply,
    csrfToken: string,
    authorization: AuthorizationRequest,
    status: number,
    error?: string,
  ): FastifyReply {
    allowFormTarget(reply, authorization.redirectUri);
    return sendPage(
      reply,
      status,
      signInPage(frameFor(ui), {
        csrfToken,
        next: `/authorize?${authorization.query}`,
        clientName: authorization.client.name,
        ...(error !== undefined ? { error } : {}),
      }),
    );
  }

  async function showConsent(
    reply: FastifyReply,
    browser: BrowserContext,
    request: AuthorizationRequest,
    options: { checked?: string[]; lifetime?: string; error?: string; status?: number } = {},
  ): Promise<FastifyReply> {
    const descriptions = new Map((await ui.storage.scopes.list()).map((s) => [s.name, s.description]));
    allowFormTarget(reply, request.redirectUri);
    return sendPage(
      reply,
      options.status ?? 200,
      consentPage(frameFor(ui, browser), {
        csrfToken: browser.csrfToken,
        clientName: request.client.name,
        returnTo: returnTarget(request.redirectUri),
        request: request.query,
        scopes: request.scope.map((name) => ({
          name,
          description: descriptions.get(name) ?? name,
          checked: options.checked?.includes(name) ?? true,
        })),
        lifetime: options.lifetime ?? DEFAULT_LIFETIME,
        ...(options.error !== undefined ? { error: options.error } : {}),
      }),
    );
  }

  app.get('/authorize', async function authorize(request, reply) {
    const validation = await validate(rawQuery(request.url));
    const invalid = answerInvalid(reply, validation);
    if (invalid !== undefined || validation.outcome !== 'valid') return invalid;
    const authorization = validation.request;

    const browser = await ui.browsers.load(request, reply);
    if (browser.user === undefined) {
      // Sign in first; the form carries the request back here, where it is validated again.
      return signInToResume(reply, browser.csrfToken, authorization, 200);
    }
    if (!authorization.forceConsent) {
      const grant = await ui.authorization.rememberedGrant(authorization, browser.user.id);
      if (grant !== undefined) {
        return reply.redirect(await ui.authorization.approveWithGrant(authorization, grant), 302);
      }
    }
    return showConsent(reply, browser, authorization);
  });

  app.post('/consent', async function consent(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const validation = await validate(field(request.body, 'request') ?? '');
    const invalid = answerInvalid(reply, validation);
    if (invalid !== undefined || validation.outcome !== 'valid') return invalid;
    const authorization = validation.request;

    const browser = await ui.browsers.load(request, reply);
    if (browser.user === undefined) {
      // The session ended while the page was open: sign in again, then the request resumes.
      return signInToResume(
        reply,
        browser.csrfToken,
        authorization,
        401,
        'Your session has ended. Please sign in again.',
      );
    }

    const decision = field(request.body, 'decision');
    if (decision === 'deny') return reply.redirect(ui.authorization.deny(authorization), 302);
    if (decision !== 'allow') {
      return sendMessage(
        ui,
        reply,
        400,
        'This request cannot be completed',
        'Choose Allow or Deny.',
        browser,
      );
    }
    const scope = [...new Set(fields(request.body, 'scope'))];
    const lifetimeField = field(request.body, 'lifetime');
    const lifetime = parseLifetime(lifetimeField);
    if (!isSubset(scope, authorization.scope) || lifetime === undefined) {
      return sendMessage(
        ui,
        reply,
        400,
        'This request cannot be completed',
        'The form asked for access the application did not request.',
        browser,
      );
    }
    if (scope.length === 0 && authorization.scope.length > 0) {
      return showConsent(reply, browser, authorization, {
        checked: [],
        lifetime: LIFETIME_OPTIONS.some((o) => o.value === lifetimeField) ? lifetimeField : undefined,
        error: 'Tick at least one permission to allow, or choose Deny.',
        status: 400,
      });
    }
    // Keep the request's order of scopes, narrowed to what stayed ticked.
    const granted = authorization.scope.filter((name) => scope.includes(name));
    const location = await ui.authorization.approve(authorization, browser.user.id, {
      scope: granted,
      lifetime,
    });
    return reply.redirect(location, 302);
  });
}
