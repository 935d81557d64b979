import type { FastifyReply } from 'fastify';
import type { GatehouseConfig } from '../../config.js';
import type { AuthorizationRequest } from '../../core/authorize/request.js';
import type { Engine } from '../../core/engine.js';
import type { BrowserContext, BrowserContexts } from './browser-context.js';
import { formAsSearchParams } from '../form-params.js';
import { formatWait } from './pages/format.js';
import { messagePage } from './pages/message-page.js';
import type { PageFrame } from './pages/layout.js';

/** What every browser route needs, built once by the plugin. */
export interface UiContext {
  config: GatehouseConfig;
  /** Sign-in, browser sessions, authorization and connected apps: every rule the pages apply. */
  engine: Engine;
  browsers: BrowserContexts;
}

export function frameFor(ui: UiContext, browser?: BrowserContext): PageFrame {
  return {
    productName: ui.config.productName,
    logoUrl: ui.config.logoUrl,
    basePath: ui.config.basePath,
    ...(browser?.user ? { username: browser.user.username, csrfToken: browser.csrfToken } : {}),
  };
}

/** Pages carry CSRF tokens and personal data: never cached. */
export function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(body);
}

export function sendMessage(
  ui: UiContext,
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
  browser?: BrowserContext,
): FastifyReply {
  return sendPage(reply, status, messagePage(frameFor(ui, browser), title, message));
}

/**
 * A sign-in attempt refused by the lockout (decisions 8, 30): every method answers the same 429 page,
 * with Retry-After.
 */
export function tooManySignIns(ui: UiContext, reply: FastifyReply, retryAfter: number): FastifyReply {
  reply.header('retry-after', String(retryAfter));
  return sendMessage(
    ui,
    reply,
    429,
    'Too many attempts',
    `Too many failed sign-ins. Wait ${formatWait(retryAfter)} and try again.`,
  );
}

/** A disabled user proved who they are (decision 37): every way in answers the same. */
export function accountDisabled(ui: UiContext, reply: FastifyReply): FastifyReply {
  return sendMessage(
    ui,
    reply,
    403,
    'Account disabled',
    'This account is disabled, so it cannot sign in. Ask an administrator to enable it.',
  );
}

export function forbiddenForm(ui: UiContext, reply: FastifyReply): FastifyReply {
  return sendMessage(
    ui,
    reply,
    403,
    'This form has expired',
    'The form was not sent from this site, or it has expired. Go back, reload the page and try again.',
  );
}

/** A single form field; a repeated or missing one is undefined. */
export function field(body: unknown, name: string): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** Every value of a form field that may repeat (checkboxes). */
export function fields(body: unknown, name: string): string[] {
  if (typeof body !== 'object' || body === null) return [];
  const value = (body as Record<string, unknown>)[name];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/**
 * A POST form as the query string it stands for (the authorization and end-session endpoints take
 * POST as well as GET: Core §3.1.2.1, RP-Initiated Logout 1.0 §2); repeated fields stay repeated.
 */
export function formAsQuery(body: unknown): string {
  return formAsSearchParams(body).toString();
}

/** The raw query string of a request, exactly as sent (repeated parameters must stay visible). */
export function rawQuery(url: string): string {
  const index = url.indexOf('?');
  return index === -1 ? '' : url.slice(index + 1);
}

const MAX_NEXT_LENGTH = 8192;

/**
 * Where sign-in may continue to: only our own pages, given relative to the base path, so the field
 * can never become an open redirect. An /authorize target is validated again when it is followed, and
 * a device's consent page checks its code and ticket again.
 */
export function safeNext(next: string | undefined): string {
  if (next === undefined || next.length > MAX_NEXT_LENGTH || /[\\#\s]/.test(next)) return '/account/apps';
  if (next === '/account/apps' || next === '/account/security' || next === '/playground') return next;
  if (next.startsWith('/authorize?')) return next;
  // The consent page of a device's code (RFC 8628 §3.3), which checks its ticket again.
  if (next.startsWith('/device/consent?')) return next;
  return '/account/apps';
}

/** The authorization request a sign-in continues to, if it is one and still valid. */
export async function pendingAuthorization(
  ui: UiContext,
  next: string,
): Promise<AuthorizationRequest | undefined> {
  if (!next.startsWith('/authorize?')) return undefined;
  const validation = await ui.engine.authorization.validate(rawQuery(next));
  return validation.outcome === 'valid' ? validation.request : undefined;
}
