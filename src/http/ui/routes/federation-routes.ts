import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import type { IdentityProvider, SessionAuthentication, User } from '../../../core/model.js';
import { assurance, unsatisfied } from '../../../core/sign-in/assurance.js';
import {
  UpstreamError,
  type UpstreamIdentity,
  type UpstreamRequest,
} from '../../../core/federation/upstream.js';
import type { SignedInContext } from '../browser-context.js';
import { clearPendingLink, setPendingLink } from '../federation/pending-link.js';
import {
  clearUpstreamState,
  setUpstreamState,
  UPSTREAM_STATE_SECONDS,
  upstreamState,
  type UpstreamPurpose,
  type UpstreamState,
} from '../federation/upstream-state.js';
import { federationFailurePage } from '../pages/federation-pages.js';
import { setPendingSignIn } from '../second-factor/pending-sign-in.js';
import { linkedAccountsSection } from '../security/linked-accounts-section.js';
import { askToSignInAgain, signedInRecently } from '../security/recent-sign-in.js';
import { offeredProviders } from '../sign-in-form.js';
import { completeReauthentication, completeSignIn } from '../sign-in-completion.js';
import {
  field,
  forbiddenForm,
  frameFor,
  pendingAuthorization,
  rawQuery,
  safeNext,
  sendPage,
  tooManySignIns,
  type UiContext,
} from '../ui-context.js';
import { deviceClientOfNext } from './device-routes.js';
import { SECURITY_NOTICE_COOKIE, SECURITY_NOTICE_OPTIONS, sendSecurityPage } from './security-routes.js';

/** An upstream error code shown on the failure page: a short token, or nothing at all. */
const ERROR_CODE = /^[A-Za-z0-9_.:-]{1,64}$/;

/** What went wrong, as the failure page says it (decision 40). */
type Failure =
  | { kind: 'unknown-provider' }
  | { kind: 'expired' }
  | { kind: 'upstream'; error: UpstreamError }
  | { kind: 'disabled' }
  | { kind: 'not-linked' }
  | { kind: 'linked-to-another' };

/**
 * The upstream identity providers' browser routes (docs/decisions.md, decision 40): the start of the
 * upstream flow (`/sign-in/upstream/:id`: a sign-in, `reauth=1` a re-authentication of the signed-in
 * user, `link=1` linking from the security page), its callback, "Don't link it" of a pending link,
 * and "Remove" of a linked account. `stateKey` seals the flow's cookie (upstream-state.ts).
 */
export function registerFederationRoutes(app: FastifyInstance, ui: UiContext, stateKey: Buffer): void {
  const base = ui.config.basePath;
  const federation = ui.engine.federation;

  /** The failure page: what happened in plain words, and the way back (never signed in, never a 500). */
  function fail(
    reply: FastifyReply,
    provider: Pick<IdentityProvider, 'name'> | undefined,
    failure: Failure,
    back: { next: string; purpose: UpstreamPurpose },
  ): FastifyReply {
    const name = provider?.name ?? 'The provider';
    let status: number;
    let title = 'Sign-in failed';
    let message: string;
    switch (failure.kind) {
      case 'unknown-provider':
        status = 404;
        title = 'Unknown sign-in provider';
        message = 'There is no sign-in provider of that name here.';
        break;
      case 'expired':
        status = 400;
        title = 'Sign-in expired';
        message = 'This sign-in link has expired or was already used. Start again.';
        break;
      case 'disabled':
        status = 403;
        title = 'Account disabled';
        message = 'This account is disabled, so it cannot sign in. Ask an administrator to enable it.';
        break;
      case 'not-linked':
        status = 403;
        message = `That ${name} account is not linked to your account, so it cannot confirm it is you.`;
        break;
      case 'linked-to-another':
        status = 409;
        title = 'Not linked';
        message = `That ${name} account is already linked to another account here, so it was not linked to yours.`;
        break;
      case 'upstream': {
        const { kind, detail } = failure.error;
        status = 502;
        if (kind === 'denied') {
          status = 403;
          title = 'Sign-in cancelled';
          message = `The sign-in at ${name} was cancelled.`;
        } else if (kind === 'upstream-error') {
          message = `${name} answered with an error (${ERROR_CODE.test(detail) ? detail : 'unknown'}).`;
        } else if (kind === 'wrong-issuer') {
          message = `${name}'s answer did not check out: it names another issuer than ${name}'s, as if it came from another provider.`;
        } else if (kind === 'invalid-response' && detail === 'acr-not-delivered') {
          status = 403;
          message = `${name} did not confirm the sign-in as strongly as this site requires.`;
        } else if (kind === 'invalid-response') {
          message = `${name}'s answer did not check out.`;
        } else {
          message = `${name} could not be reached.`;
        }
        break;
      }
    }
    const link =
      back.purpose === 'link'
        ? { href: `${base}/account/security`, label: 'Back to Security' }
        : back.purpose === 'reauth'
          ? { href: `${base}/sign-in?reauth=1&next=${encodeURIComponent(back.next)}`, label: 'Try again' }
          : { href: `${base}/sign-in?next=${encodeURIComponent(back.next)}`, label: 'Back to sign in' };
    return sendPage(reply, status, federationFailurePage(frameFor(ui), { title, message, back: link }));
  }

  /** What the upstream sign-in is asked for, passed through from the authorization request (step-up). */
  async function upstreamRequestFor(next: string, purpose: UpstreamPurpose): Promise<UpstreamRequest> {
    // A re-authentication here is one at the upstream too (prompt=login, max_age=0); linking asks the
    // person to sign in there, so the account linked is the one they choose, not whichever is open.
    if (purpose === 'reauth') return { prompt: 'login', maxAge: 0 };
    if (purpose === 'link') return { prompt: 'login' };
    const authorization = await pendingAuthorization(ui, next);
    if (authorization === undefined) return {};
    const { acrValues, maxAge } = authorization.authenticationRequirement;
    // A login_hint meant for the provider goes with it (an idp_hint picked that provider).
    const loginHint =
      authorization.idpHint !== undefined && !authorization.loginHint?.startsWith('idp:')
        ? authorization.loginHint
        : undefined;
    return {
      ...(acrValues.length > 0 ? { acrValues } : {}),
      ...(maxAge !== null ? { maxAge } : {}),
      ...(authorization.prompt.login ? { prompt: 'login' as const } : {}),
      ...(loginHint !== undefined ? { loginHint } : {}),
    };
  }

  app.get(ENDPOINTS.signInUpstream.path, async function upstreamStart(request, reply) {
    const { id } = request.params as { id: string };
    const query = request.query as Record<string, unknown>;
    let next = safeNext(typeof query.next === 'string' ? query.next : undefined);
    const browser = await ui.browsers.load(request, reply);
    let purpose: UpstreamPurpose = 'sign-in';
    let userId: string | undefined;
    if (query.link === '1') {
      // "Link NAME" (security page): the signed-in user's own choice, proven by the page's CSRF token,
      // after a recent sign-in, as every change to how the account signs in (decision 37).
      if (!ui.browsers.verifyCsrf(request, query.csrf_token)) return forbiddenForm(ui, reply);
      if (browser.user === undefined || browser.authentication === undefined) {
        return reply.redirect(`${base}/sign-in?next=/account/security`, 303);
      }
      if (!signedInRecently(ui, browser as SignedInContext)) return askToSignInAgain(ui, reply);
      purpose = 'link';
      userId = browser.user.id;
      next = '/account/security';
    } else if (query.reauth === '1' && browser.user !== undefined) {
      purpose = 'reauth';
      userId = browser.user.id;
    }
    const found = await federation.provider(id);
    // Decision 39: a sign-in for a client goes only through a provider the client offers (a hand-made
    // start URL cannot widen its choice); linking and re-authenticating are the account's own.
    const offered =
      purpose === 'sign-in'
        ? ((await pendingAuthorization(ui, next))?.client.identityProviders ?? null)
        : null;
    const provider = found && offeredProviders([found], offered)[0];
    if (provider === undefined)
      return fail(reply, undefined, { kind: 'unknown-provider' }, { next, purpose });
    let authorization;
    try {
      authorization = await federation.begin(provider, await upstreamRequestFor(next, purpose));
    } catch (error) {
      return fail(
        reply,
        provider,
        { kind: 'upstream', error: asUpstreamError(request, error, 'unreachable') },
        {
          next,
          purpose,
        },
      );
    }
    const { url, ...expected } = authorization;
    setUpstreamState(reply, stateKey, browser.browserId, {
      ...expected,
      providerId: provider.id,
      next,
      purpose,
      ...(userId !== undefined ? { userId } : {}),
      expiresAt: ui.engine.clock.now() + UPSTREAM_STATE_SECONDS,
    });
    return reply.redirect(url, 303);
  });

  app.get(ENDPOINTS.signInCallback.path, async function upstreamCallback(request, reply) {
    const { id } = request.params as { id: string };
    const browser = await ui.browsers.load(request, reply);
    const stored = upstreamState(request, stateKey, ui.browsers.browserId(request), ui.engine.clock.now());
    // One callback per flow: the cookie goes whatever happens next.
    clearUpstreamState(reply);
    if (stored === undefined) {
      return fail(reply, undefined, { kind: 'expired' }, { next: '/account/apps', purpose: 'sign-in' });
    }
    const back = { next: stored.next, purpose: stored.purpose };
    const provider = await federation.provider(stored.providerId);
    if (provider === undefined) return fail(reply, undefined, { kind: 'unknown-provider' }, back);
    // An answer arriving at another provider's callback than the flow was started with: a mix-up.
    if (id !== stored.providerId) {
      return fail(
        reply,
        provider,
        { kind: 'upstream', error: new UpstreamError('wrong-issuer', 'callback') },
        back,
      );
    }
    const query = request.query as Record<string, unknown>;
    // Not this flow's state, or this flow's state seen before (here or in another process): a replay.
    if (query.state !== stored.state || !(await federation.spendState(stored.state, stored.expiresAt))) {
      return fail(reply, provider, { kind: 'expired' }, back);
    }
    let identity: UpstreamIdentity;
    try {
      const callbackUrl = new URL(federation.redirectUri(provider));
      callbackUrl.search = rawQuery(request.url);
      identity = await federation.finish(provider, callbackUrl, stored);
    } catch (error) {
      return fail(
        reply,
        provider,
        { kind: 'upstream', error: asUpstreamError(request, error, 'invalid-response') },
        back,
      );
    }
    switch (stored.purpose) {
      case 'link':
        return linkAccount(request, reply, provider, identity, stored);
      case 'reauth':
        return reauthenticate(request, reply, provider, identity, stored);
      case 'sign-in':
        break;
    }
    const result = await federation.signIn(provider, identity, request.ip);
    switch (result.outcome) {
      case 'throttled':
        return tooManySignIns(ui, reply, result.retryAfter);
      case 'disabled':
        return fail(reply, provider, { kind: 'disabled' }, back);
      case 'wrong-credentials':
        // The user went between the callback and the sign-in (deleted meanwhile).
        return fail(reply, provider, { kind: 'expired' }, back);
      case 'link-required':
        // Decision 40, case d: the person signs in to the local account first; the link follows.
        setPendingLink(ui, reply, browser.browserId, result.pending);
        return reply.redirect(`${base}/sign-in?next=${encodeURIComponent(stored.next)}`, 303);
      case 'signed-in':
        return finishSignIn(request, reply, result.user, result.authentication, stored);
    }
  });

  /**
   * Ends a federated sign-in (decision 40): a federated sign-in is a first factor, like the password
   * (decision 34), unless a trusted upstream reported two kinds of factor: a user with an
   * authenticator app, or who must use a second factor (policy, the client's require_mfa), takes the
   * second-factor step (set up first when they have none), which records the federated sign-in first;
   * so does a user with a passkey when the application asks for a stronger `acr` than was reached.
   */
  async function finishSignIn(
    request: FastifyRequest,
    reply: FastifyReply,
    user: User,
    authentication: SessionAuthentication,
    stored: UpstreamState,
  ): Promise<FastifyReply> {
    const reauth = stored.purpose === 'reauth';
    const reached = assurance([authentication]);
    const authorization = reauth ? undefined : await pendingAuthorization(ui, stored.next);
    const client =
      authorization?.client ??
      (reauth ? undefined : await deviceClientOfNext(ui, ui.browsers.browserId(request), stored.next));
    let step = reached.amr.includes('mfa')
      ? 'complete'
      : await ui.engine.secondFactors.afterPassword(user, client);
    // The application asks for a stronger sign-in than the upstream's (acr_values, decision 36): a
    // user with a passkey gives it as the second step, which reaches it (decision 33).
    const now = ui.engine.clock.now();
    const requirement = authorization && { ...authorization.authenticationRequirement, maxAge: null };
    if (
      step === 'complete' &&
      requirement !== undefined &&
      unsatisfied({ authTime: now, acr: reached.acr }, requirement, now) === 'acr' &&
      (await ui.engine.passkeys.list(user.id)).length > 0
    ) {
      step = 'verify';
    }
    const completed = { userId: user.id, authentication, next: stored.next };
    if (reauth && step !== 'verify') return completeReauthentication(ui, request, reply, completed);
    if (step !== 'complete') {
      const browserId = ui.browsers.browserId(request);
      if (browserId === undefined) return fail(reply, undefined, { kind: 'expired' }, stored);
      setPendingSignIn(ui, reply, browserId, {
        userId: user.id,
        first: authentication,
        next: stored.next,
        setUp: step === 'set-up',
        ...(reauth ? { reauth: true } : {}),
      });
      const path =
        step === 'set-up' ? ENDPOINTS.signInSecondFactorSetUp.path : ENDPOINTS.signInSecondFactor.path;
      return reply.redirect(base + path, 303);
    }
    return completeSignIn(ui, request, reply, completed);
  }

  /** `reauth=1`: the signed-in user who started it, through an upstream account linked to them. */
  async function reauthenticate(
    request: FastifyRequest,
    reply: FastifyReply,
    provider: IdentityProvider,
    identity: UpstreamIdentity,
    stored: UpstreamState,
  ): Promise<FastifyReply> {
    const browser = await ui.browsers.load(request, reply);
    if (browser.user === undefined || browser.user.id !== stored.userId) {
      // Signed out (or in as someone else) meanwhile: nothing to confirm.
      return fail(reply, provider, { kind: 'expired' }, stored);
    }
    const result = await federation.reauthenticate(provider, identity, browser.user, request.ip);
    if (result.outcome === 'throttled') return tooManySignIns(ui, reply, result.retryAfter);
    if (result.outcome === 'disabled') return fail(reply, provider, { kind: 'disabled' }, stored);
    if (result.outcome === 'wrong-credentials') return fail(reply, provider, { kind: 'not-linked' }, stored);
    return finishSignIn(request, reply, result.user, result.authentication, stored);
  }

  /** "Link NAME": the upstream account linked to the signed-in user who started it. */
  async function linkAccount(
    request: FastifyRequest,
    reply: FastifyReply,
    provider: IdentityProvider,
    identity: UpstreamIdentity,
    stored: UpstreamState,
  ): Promise<FastifyReply> {
    const browser = await ui.browsers.load(request, reply);
    if (browser.user === undefined || browser.user.id !== stored.userId) {
      return fail(reply, provider, { kind: 'expired' }, stored);
    }
    const result = await federation.link(provider, identity, browser.user);
    if (result.outcome === 'linked-to-another') {
      return fail(reply, provider, { kind: 'linked-to-another' }, stored);
    }
    setNotice(
      reply,
      result.outcome === 'linked'
        ? `${provider.name} linked`
        : `That ${provider.name} account was already linked.`,
    );
    return reply.redirect(`${base}/account/security`, 303);
  }

  // "Don't link it" on the sign-in page of a pending link: the cookie goes, the sign-in page stays.
  app.post(ENDPOINTS.signInPendingLinkCancel.path, async function cancelPendingLink(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    clearPendingLink(reply);
    const next = safeNext(field(request.body, 'next'));
    return reply.redirect(`${base}/sign-in?next=${encodeURIComponent(next)}`, 303);
  });

  app.post(ENDPOINTS.accountLinkedAccountRemoval.path, async function removeLinkedAccount(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const browser = await ui.browsers.load(request, reply);
    if (browser.user === undefined || browser.authentication === undefined) {
      return reply.redirect(`${base}/sign-in?next=/account/security`, 303);
    }
    const signedIn = browser as SignedInContext;
    if (!signedInRecently(ui, signedIn)) return askToSignInAgain(ui, reply);
    const result = await federation.unlink(signedIn.user, field(request.body, 'id') ?? '');
    if (result === 'last-way-in') {
      const section = await linkedAccountsSection(
        ui,
        signedIn,
        'This linked account is your only way to sign in, so it was not removed. Set a password or add a passkey first.',
      );
      return sendSecurityPage(ui, request, reply, signedIn, {
        status: 409,
        ...(section !== undefined ? { replace: section } : {}),
      });
    }
    setNotice(
      reply,
      result === 'removed' ? 'Linked account removed' : 'That linked account was already removed.',
    );
    return reply.redirect(`${base}/account/security`, 303);
  });
}

/**
 * The security page's one-time notice. Lax, not Strict as elsewhere: the callback is reached from the
 * upstream's site, and Chromium does not send a Strict cookie on a redirect chain a cross-site
 * navigation started, so the page it redirects to would not show it.
 */
function setNotice(reply: FastifyReply, notice: string): void {
  reply.setCookie(SECURITY_NOTICE_COOKIE, notice.slice(0, 120), {
    ...SECURITY_NOTICE_OPTIONS,
    sameSite: 'lax',
    maxAge: 60,
  });
}

/**
 * The port's failure, or any other error of the upstream client taken as `kind` (logged, without
 * the URL, which holds the code): the person sees a page saying what failed, never a 500.
 */
function asUpstreamError(
  request: FastifyRequest,
  error: unknown,
  kind: 'unreachable' | 'invalid-response',
): UpstreamError {
  if (error instanceof UpstreamError) return error;
  request.log.error({ err: error }, 'upstream identity provider flow failed');
  return new UpstreamError(kind, 'unexpected');
}
