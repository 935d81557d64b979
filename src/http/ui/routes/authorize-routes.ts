import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import { PushedRequestSpentError } from '../../../core/authorize/authorization-service.js';
import type { SignedIn } from '../../../core/sign-in/assurance.js';
import type { AuthorizationRequest, AuthorizationValidation } from '../../../core/authorize/request.js';
import { responseLocation, type AuthorizationResponse } from '../../../core/authorize/response.js';
import type { BrowserContext } from '../browser-context.js';
import { allowFormTarget } from '../content-security-policy.js';
import { isConsoleClient } from '../../../core/clients/console-client.js';
import { consentLines, readConsentForm, type ConsentRedisplay } from '../consent-form.js';
import { consentPage } from '../pages/consent-page.js';
import { formPostPage } from '../pages/form-post-page.js';
import { clientHostField, documentHost } from '../../../core/clients/metadata-documents.js';
import type { SignInPageInput } from '../pages/sign-in-page.js';
import { offeredProviders, sendSignInPage } from '../sign-in-form.js';
import {
  field,
  formAsQuery,
  forbiddenForm,
  frameFor,
  rawQuery,
  sendMessage,
  sendPage,
  type UiContext,
} from '../ui-context.js';

/** The console's grant lasts one hour, the shortest the consent page offers: it needs no refresh token. */
const CONSOLE_GRANT_SECONDS = 3600;

/** Where the user is sent back to, as the consent page names it. */
function returnTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.host === '' ? url.protocol : url.host;
}

/**
 * GET /authorize (RFC 6749 §3.1, §4.1.1, §4.2.1) and POST /consent, where the user's answer arrives.
 * Nothing is redirected before the client and its redirect URI are verified (§4.1.2.1).
 */
export function registerAuthorizeRoutes(app: FastifyInstance, ui: UiContext): void {
  const validate = (query: string) => ui.engine.authorization.validate(query);

  /**
   * Sends an authorization response to the client: a redirect for the query and fragment modes, a
   * page that posts it for form_post (OAuth 2.0 Form Post Response Mode §2), whose form may go to the
   * redirect URI's origin.
   */
  function answer(
    reply: FastifyReply,
    response: AuthorizationResponse,
    client: { clientName: string; clientHost?: string | undefined },
  ): FastifyReply {
    if (response.mode !== 'form_post') return reply.redirect(responseLocation(response), 302);
    allowFormTarget(reply, response.redirectUri);
    return sendPage(
      reply,
      200,
      formPostPage(frameFor(ui), {
        action: response.redirectUri,
        params: response.params,
        clientName: client.clientName,
        ...(client.clientHost !== undefined ? { clientHost: client.clientHost } : {}),
      }),
    );
  }

  /** A client's name, and its document's host for a Client ID Metadata Document's client (decision 46). */
  const named = (client: AuthorizationRequest['client']) => ({
    clientName: client.name,
    clientHost: documentHost(client),
  });

  /**
   * Runs one step of the flow; a pushed request (RFC 9126) answered meanwhile, by another tab or a
   * replay, gets an error page: the client has had its one answer.
   */
  async function once(reply: FastifyReply, step: () => Promise<FastifyReply>): Promise<FastifyReply> {
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof PushedRequestSpentError)) throw error;
      return sendMessage(
        ui,
        reply,
        400,
        'This request cannot be completed',
        'This request was already answered, or has expired. Return to the application and start again.',
      );
    }
  }

  /** Answers a request that failed validation; undefined when it is valid. */
  function answerInvalid(reply: FastifyReply, validation: AuthorizationValidation): FastifyReply | undefined {
    if (validation.outcome === 'error-page') {
      return sendMessage(ui, reply, 400, 'This request cannot be completed', validation.description);
    }
    if (validation.outcome === 'error-redirect') {
      return answer(reply, validation.response, validation);
    }
    return undefined;
  }

  /** The sign-in page, carrying the authorization request back to /authorize, validated again there. */
  function signInToResume(
    request: FastifyRequest,
    reply: FastifyReply,
    browser: BrowserContext,
    authorization: AuthorizationRequest,
    status: number,
    options: Pick<SignInPageInput, 'error' | 'again' | 'strongerAcr' | 'continueAs' | 'username'> = {},
  ): Promise<FastifyReply> {
    // A login_hint naming a provider (idp:<id>) is no user name to fill in.
    const hint = authorization.loginHint?.startsWith('idp:') ? undefined : authorization.loginHint;
    const username = options.username ?? hint;
    return sendSignInPage(ui, request, reply, status, browser, {
      csrfToken: browser.csrfToken,
      next: `/authorize?${authorization.query}`,
      authorization,
      ...options,
      ...(username !== undefined ? { username } : {}),
    });
  }

  /**
   * Decision 40: the provider an `idp_hint` (or `login_hint=idp:<id>`) names, when it is one offered
   * to the client: the sign-in goes straight to it, skipping the sign-in page.
   */
  async function hintedProvider(authorization: AuthorizationRequest): Promise<string | undefined> {
    if (authorization.idpHint === undefined) return undefined;
    const provider = await ui.engine.federation.provider(authorization.idpHint);
    if (provider === undefined) return undefined;
    // Decision 39: only a provider the client offers (all of them unless it chose).
    return offeredProviders([provider], authorization.client.identityProviders ?? null).length > 0
      ? provider.id
      : undefined;
  }

  /**
   * The signed-in user as the request needs them: the sign-in itself (when, how and in which session,
   * read with the user), for an OpenID Connect request's ID token and for any request's step-up and
   * tokens (RFC 9470: acr and auth_time in access tokens; decision 36); undefined when nobody is
   * signed in.
   */
  function signedIn(browser: BrowserContext, _authorization: AuthorizationRequest): SignedIn | undefined {
    if (browser.user === undefined) return undefined;
    return browser.authentication ?? { userId: browser.user.id };
  }

  async function showConsent(
    reply: FastifyReply,
    browser: BrowserContext,
    request: AuthorizationRequest,
    options: ConsentRedisplay & { status?: number } = {},
  ): Promise<FastifyReply> {
    const lines = consentLines(await ui.engine.scopes.list(), request.scope, request.openid, options);
    allowFormTarget(reply, request.redirectUri);
    return sendPage(
      reply,
      options.status ?? 200,
      consentPage(frameFor(ui, browser), {
        csrfToken: browser.csrfToken,
        clientName: request.client.name,
        ...clientHostField(request.client),
        returnTo: returnTarget(request.redirectUri),
        request: request.query,
        ...lines,
        // RFC 8707: which server the token is for, as the operator registered it.
        resources: request.resourceNames,
        selfRegistered: request.client.registration !== 'operator',
      }),
    );
  }

  /**
   * What the request needs next (AuthorizationService.next): the sign-in page (with the user name
   * the request hints at, or the signed-in one when asked again), the account choice, the consent
   * page, or the answer itself.
   */
  async function authorize(
    request: FastifyRequest,
    reply: FastifyReply,
    query: string,
  ): Promise<FastifyReply> {
    const validation = await validate(query);
    const invalid = answerInvalid(reply, validation);
    if (invalid !== undefined || validation.outcome !== 'valid') return invalid as FastifyReply;
    const authorization = validation.request;

    // One read: who is signed in, since when, and what they already allowed this client.
    const browser = await ui.browsers.load(request, reply, { grantsOf: authorization.client.id });
    // Decision 34: a sign-in with the password alone counts as none for a client that requires two
    // factors (or under GATEHOUSE_REQUIRE_MFA): the person signs in again, with the second factor
    // (set up then, if they have none); prompt=none gets login_required.
    const enough =
      browser.user === undefined ||
      ui.engine.secondFactors.satisfies(browser.user, browser.authentication, authorization.client);
    const session = enough ? signedIn(browser, authorization) : undefined;
    const interacted =
      ui.browsers.takeInteraction(request, reply, browser.browserId, authorization.query) &&
      session !== undefined;
    const next = await ui.engine.authorization.next(authorization, session, {
      interacted,
      ...(browser.grants !== undefined ? { grants: browser.grants } : {}),
    });
    switch (next.step) {
      case 'respond':
        return answer(reply, next.response, named(authorization.client));
      case 'sign-in': {
        const hinted = await hintedProvider(authorization);
        if (hinted !== undefined) {
          const next = encodeURIComponent(`/authorize?${authorization.query}`);
          return reply.redirect(
            `${ui.config.basePath}/sign-in/upstream/${encodeURIComponent(hinted)}?next=${next}`,
            303,
          );
        }
        // Sign in first; the form carries the request back here, where it is validated again.
        return signInToResume(request, reply, browser, authorization, 200, {
          ...(next.reason !== 'signed-out' ? { again: next.reason } : {}),
          ...(next.acr !== undefined ? { strongerAcr: next.acr } : {}),
          ...(next.reason !== 'signed-out' && authorization.loginHint === undefined && browser.user
            ? { username: browser.user.username }
            : {}),
        });
      }
      case 'select-account':
        return signInToResume(request, reply, browser, authorization, 200, {
          ...(browser.user ? { continueAs: browser.user.username } : {}),
        });
      case 'consent':
        // Decision 42: the admin console is Gatehouse's own first-party client; its administrator chose
        // to sign in to it, so no consent page is shown (`admin` reaches only administrators: decision 29).
        if (session !== undefined && isConsoleClient(next.request.client)) {
          const response = await ui.engine.authorization.approve(
            next.request,
            session,
            { scope: next.request.scope, lifetime: CONSOLE_GRANT_SECONDS },
            request.ip,
          );
          return answer(reply, response, named(authorization.client));
        }
        return showConsent(reply, browser, next.request);
    }
  }

  app.get(ENDPOINTS.authorization.path, async function authorizeGet(request, reply) {
    return once(reply, () => authorize(request, reply, rawQuery(request.url)));
  });

  // Core §3.1.2.1: the authorization endpoint takes POST too. The browser is sent on to GET with the
  // same parameters, where its SameSite=Lax cookie comes along (a cross-site POST carries none).
  app.post(ENDPOINTS.authorization.path, async function authorizePost(request, reply) {
    return reply.redirect(`${ui.config.basePath}/authorize?${formAsQuery(request.body)}`, 303);
  });

  app.post(ENDPOINTS.consent.path, async function consent(request, reply) {
    return once(reply, () => consentAnswer(request, reply));
  });

  async function consentAnswer(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const validation = await validate(field(request.body, 'request') ?? '');
    const invalid = answerInvalid(reply, validation);
    if (invalid !== undefined || validation.outcome !== 'valid') return invalid as FastifyReply;
    const authorization = validation.request;

    const browser = await ui.browsers.load(request, reply);
    const session = signedIn(browser, authorization);
    if (browser.user === undefined || session === undefined) {
      // The session ended while the page was open: sign in again, then the request resumes.
      return signInToResume(request, reply, browser, authorization, 401, {
        error: 'Your session has ended. Please sign in again.',
      });
    }

    // What the consent page offered this user (decision 29: `admin` only to an administrator).
    const offered = await ui.engine.authorization.forUser(authorization, browser.user.id);
    const form = readConsentForm(request.body, offered.scope, offered.openid);
    switch (form.answer) {
      case 'deny':
        return answer(reply, await ui.engine.authorization.deny(authorization), named(authorization.client));
      case 'invalid':
        return sendMessage(ui, reply, 400, 'This request cannot be completed', form.problem, browser);
      case 'none-ticked':
        return showConsent(reply, browser, offered, {
          checked: [],
          lifetime: form.lifetime,
          error: 'Tick at least one permission to allow, or choose Deny.',
          status: 400,
        });
      case 'allow':
        break;
    }
    const response = await ui.engine.authorization.approve(
      offered,
      session,
      { scope: form.scope, lifetime: form.lifetime },
      request.ip,
    );
    return answer(reply, response, named(authorization.client));
  }
}
