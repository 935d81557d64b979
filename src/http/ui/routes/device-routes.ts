import { clientHostField, documentHost } from '../../../core/clients/metadata-documents.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import type { Client } from '../../../core/model.js';
import type { Authentication, SignedIn } from '../../../core/sign-in/assurance.js';
import type { PendingDeviceRequest, UserCodeCheck } from '../../../core/device/device-authorization.js';
import { normaliseUserCode } from '../../../core/device/user-code.js';
import type { BrowserContext } from '../browser-context.js';
import { consentLines, readConsentForm, type ConsentRedisplay } from '../consent-form.js';
import { consentPage } from '../pages/consent-page.js';
import { deviceCodePage, deviceDonePage } from '../pages/device-page.js';
import { formatWait } from '../pages/format.js';
import { signInPage } from '../pages/sign-in-page.js';
import { field, forbiddenForm, frameFor, sendMessage, sendPage, type UiContext } from '../ui-context.js';

/** Where the consent page of a checked code lives (GET shows it, POST answers it). */
export const DEVICE_CONSENT_PATH = ENDPOINTS.deviceConsent.path;

/** What the verification page says of a code that cannot be used (RFC 8628 §3.3). */
const REFUSALS: Record<Exclude<UserCodeCheck['outcome'], 'pending' | 'throttled'>, string> = {
  malformed: 'That is not a code from a device. Codes are eight letters, like BCDF-GHJK.',
  unknown: 'That code is not right. Check the code your device shows and try again.',
  expired: 'That code has expired. Start again on your device to get a new code.',
  decided: 'That code has already been used. Start again on your device to get a new code.',
};

/** The consent page's address for a checked code (relative to the base path, as sign-in's `next`). */
function consentTarget(ui: UiContext, browserId: string, userCode: string): string {
  const normal = normaliseUserCode(userCode) ?? '';
  const ticket = ui.browsers.deviceTicket(browserId, normal);
  return `${DEVICE_CONSENT_PATH}?${new URLSearchParams({ user_code: userCode, ticket })}`;
}

/** Whether `ticket` is this server's for the code in this browser. */
function ticketed(
  ui: UiContext,
  browserId: string | undefined,
  userCode: string | undefined,
  ticket: string | undefined,
): userCode is string {
  const normal = userCode === undefined ? undefined : normaliseUserCode(userCode);
  if (browserId === undefined || normal === undefined) return false;
  return ui.browsers.verifyDeviceTicket(browserId, normal, ticket);
}

/**
 * A sign-in's `next` for the new browser id the sign-in gives (never the old one: session fixation).
 * The ticket of a device's consent page is bound to the browser id it was made for, so one that was
 * this browser's is made again for the new id; any other `next` stays as it is (a ticket of another
 * browser is refused where it leads).
 */
export function deviceTargetAfterSignIn(
  ui: UiContext,
  next: string,
  oldBrowserId: string | undefined,
  newBrowserId: string,
): string {
  const prefix = `${DEVICE_CONSENT_PATH}?`;
  if (!next.startsWith(prefix)) return next;
  const query = new URLSearchParams(next.slice(prefix.length));
  const codes = query.getAll('user_code');
  const tickets = query.getAll('ticket');
  if (codes.length !== 1 || tickets.length !== 1) return next;
  const userCode = codes[0];
  if (!ticketed(ui, oldBrowserId, userCode, tickets[0])) return next;
  return consentTarget(ui, newBrowserId, userCode);
}

/**
 * The client a device's consent page (a sign-in's `next`) is for, when its ticket is this browser's
 * and the request is still pending: what a sign-in for it must satisfy (a client's require_mfa,
 * decision 34), as pendingAuthorization gives it for an /authorize request.
 */
export async function deviceClientOfNext(
  ui: UiContext,
  browserId: string | undefined,
  next: string,
): Promise<Client | undefined> {
  const prefix = `${DEVICE_CONSENT_PATH}?`;
  if (!next.startsWith(prefix)) return undefined;
  const query = new URLSearchParams(next.slice(prefix.length));
  const codes = query.getAll('user_code');
  const tickets = query.getAll('ticket');
  if (codes.length !== 1 || tickets.length !== 1) return undefined;
  const userCode = codes[0];
  if (!ticketed(ui, browserId, userCode, tickets[0])) return undefined;
  const found = await ui.engine.deviceAuthorization.find(userCode);
  return found.outcome === 'pending' ? found.request.client : undefined;
}

/**
 * The device authorization grant's pages (RFC 8628 §3.3): GET /device, where the user types the code
 * their device shows (verification_uri; a code in the link, verification_uri_complete, only fills
 * the field), POST /device, where it is checked (wrong codes throttled per source, §5.1), then the
 * usual sign-in and the consent page at /device/consent, always shown for a device (never a
 * remembered consent: docs/decisions.md, decision 10), which names the application and shows the code
 * to compare with the device's (§5.4). The answer ends on a page saying so; the device learns it by
 * polling the token endpoint.
 *
 * The consent page's address carries the code and a ticket, a MAC of the code and the browser id that
 * POST /device gives once the code was checked: the pages after it read the request without counting
 * a failure, only a code that passed the throttled check gets there, and only in the browser that
 * typed it (a link to the page sent to someone else shows them the code page).
 */
export function registerDeviceRoutes(app: FastifyInstance, ui: UiContext): void {
  const base = ui.config.basePath;
  const device = ui.engine.deviceAuthorization;

  function codePage(
    reply: FastifyReply,
    browser: BrowserContext,
    status: number,
    input: { userCode?: string; error?: string } = {},
  ): FastifyReply {
    return sendPage(
      reply,
      status,
      deviceCodePage(frameFor(ui, browser), { csrfToken: browser.csrfToken, ...input }),
    );
  }

  /** The code of a consent page's address or form, when its ticket is this server's for it and this browser. */
  function ticketedCode(
    browser: BrowserContext,
    userCode: string | undefined,
    ticket: string | undefined,
  ): string | undefined {
    return ticketed(ui, browser.browserId, userCode, ticket) ? userCode : undefined;
  }

  /**
   * The signed-in user as the request needs them: for an OpenID Connect request the sign-in itself
   * (its ID token says when, and in which session); undefined when nobody is signed in.
   */
  async function signedIn(
    browser: BrowserContext,
    pending: PendingDeviceRequest,
  ): Promise<SignedIn | undefined> {
    if (browser.user === undefined) return undefined;
    // A client that requires a second factor (decision 34) counts a password-only sign-in as none: the
    // person signs in again, and the sign-in asks for the code (deviceClientOfNext).
    if (!ui.engine.secondFactors.satisfies(browser.user, browser.authentication, pending.client)) {
      return undefined;
    }
    if (!pending.openid) return { userId: browser.user.id };
    const authentication: Authentication | undefined = await ui.browsers.authentication(browser);
    return authentication?.userId === browser.user.id ? authentication : undefined;
  }

  function signInFirst(
    reply: FastifyReply,
    browser: BrowserContext,
    pending: PendingDeviceRequest,
    status: number,
    error?: string,
  ): FastifyReply {
    return sendPage(
      reply,
      status,
      signInPage(frameFor(ui), {
        csrfToken: browser.csrfToken,
        next: consentTarget(ui, browser.browserId, pending.userCode),
        clientName: pending.client.name,
        clientHost: documentHost(pending.client),
        ...(error !== undefined ? { error } : {}),
      }),
    );
  }

  async function showConsent(
    reply: FastifyReply,
    browser: BrowserContext,
    pending: PendingDeviceRequest,
    options: ConsentRedisplay & { status?: number } = {},
  ): Promise<FastifyReply> {
    const lines = consentLines(await ui.engine.scopes.list(), pending.scope, pending.openid, options);
    const normal = normaliseUserCode(pending.userCode) ?? '';
    return sendPage(
      reply,
      options.status ?? 200,
      consentPage(frameFor(ui, browser), {
        csrfToken: browser.csrfToken,
        clientName: pending.client.name,
        ...clientHostField(pending.client),
        device: { userCode: pending.userCode, ticket: ui.browsers.deviceTicket(browser.browserId, normal) },
        ...lines,
        // A device client may register itself (docs/decisions.md, decision 20): the page says so.
        selfRegistered: pending.client.registration !== 'operator',
      }),
    );
  }

  app.get(ENDPOINTS.deviceVerification.path, async function deviceCodeForm(request, reply) {
    const browser = await ui.browsers.load(request, reply);
    const query = request.query as Record<string, unknown>;
    const prefill =
      typeof query.user_code === 'string' && query.user_code.length <= 64 ? query.user_code : undefined;
    return codePage(reply, browser, 200, prefill !== undefined ? { userCode: prefill } : {});
  });

  app.post(ENDPOINTS.deviceVerification.path, async function deviceCodeEntered(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const browser = await ui.browsers.load(request, reply);
    const typed = (field(request.body, 'user_code') ?? '').slice(0, 64);
    const check = await device.check(typed, request.ip);
    switch (check.outcome) {
      case 'pending':
        // Post/redirect/get: a reload of the consent page reads the request again, counting nothing.
        return reply.redirect(base + consentTarget(ui, browser.browserId, check.request.userCode), 303);
      case 'throttled':
        reply.header('retry-after', String(check.retryAfter));
        return sendMessage(
          ui,
          reply,
          429,
          'Too many attempts',
          `Too many wrong codes. Wait ${formatWait(check.retryAfter)} and try again.`,
          browser,
        );
      default:
        return codePage(reply, browser, 400, { userCode: typed, error: REFUSALS[check.outcome] });
    }
  });

  /**
   * The request of a ticketed code; undefined once the code page saying why there is none is sent.
   * Never the reply itself: a Fastify reply is thenable, so an async function's caller would await it
   * (to undefined, once sent) instead of getting it back.
   */
  async function pendingOrRefusal(
    reply: FastifyReply,
    browser: BrowserContext,
    userCode: string | undefined,
    ticket: string | undefined,
  ): Promise<PendingDeviceRequest | undefined> {
    const code = ticketedCode(browser, userCode, ticket);
    if (code === undefined) {
      codePage(reply, browser, 400, { error: 'Enter the code your device shows.' });
      return undefined;
    }
    const found = await device.find(code, browser.user);
    if (found.outcome !== 'pending') {
      codePage(reply, browser, 400, { error: REFUSALS[found.outcome] });
      return undefined;
    }
    return found.request;
  }

  app.get(DEVICE_CONSENT_PATH, async function deviceConsentForm(request: FastifyRequest, reply) {
    const browser = await ui.browsers.load(request, reply);
    const query = request.query as Record<string, unknown>;
    const text = (name: string) => (typeof query[name] === 'string' ? query[name] : undefined);
    const pending = await pendingOrRefusal(reply, browser, text('user_code'), text('ticket'));
    if (pending === undefined) return reply;
    // Sign in first; the sign-in page comes back here, where the code is read again.
    if ((await signedIn(browser, pending)) === undefined) return signInFirst(reply, browser, pending, 200);
    return showConsent(reply, browser, pending);
  });

  app.post(DEVICE_CONSENT_PATH, async function deviceConsentAnswer(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const browser = await ui.browsers.load(request, reply);
    const pending = await pendingOrRefusal(
      reply,
      browser,
      field(request.body, 'user_code'),
      field(request.body, 'ticket'),
    );
    if (pending === undefined) return reply;
    const session = await signedIn(browser, pending);
    if (browser.user === undefined || session === undefined) {
      // The session ended while the page was open: sign in again, then the consent page again.
      return signInFirst(reply, browser, pending, 401, 'Your session has ended. Please sign in again.');
    }
    const form = readConsentForm(request.body, pending.scope, pending.openid);
    const gone = () =>
      codePage(reply, browser, 400, {
        error: 'This request was already answered, or has expired. Start again on your device.',
      });
    switch (form.answer) {
      case 'invalid':
        return sendMessage(ui, reply, 400, 'This request cannot be completed', form.problem, browser);
      case 'none-ticked':
        return showConsent(reply, browser, pending, {
          checked: [],
          lifetime: form.lifetime,
          error: 'Tick at least one permission to allow, or choose Deny.',
          status: 400,
        });
      case 'deny': {
        const denied = await device.deny(pending.userCode, browser.user.id);
        if (denied === 'gone') return gone();
        return sendPage(
          reply,
          200,
          deviceDonePage(frameFor(ui, browser), {
            approved: false,
            clientName: pending.client.name,
            clientHost: documentHost(pending.client),
          }),
        );
      }
      case 'allow': {
        const approved = await device.approve(
          pending.userCode,
          session,
          { scope: form.scope, lifetime: form.lifetime },
          request.ip,
        );
        if (approved === 'gone') return gone();
        if (approved === 'refused') {
          return sendMessage(
            ui,
            reply,
            403,
            'This request cannot be allowed',
            'It asks only for administrator access, which your account does not have. The device was told no.',
            browser,
          );
        }
        return sendPage(
          reply,
          200,
          deviceDonePage(frameFor(ui, browser), {
            approved: true,
            clientName: pending.client.name,
            clientHost: documentHost(pending.client),
          }),
        );
      }
    }
  });
}
