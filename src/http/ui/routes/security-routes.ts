import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import type { SignedInContext } from '../browser-context.js';
import { securityPage, type SecuritySection } from '../pages/security-page.js';
import { SECURITY_SECTIONS } from '../security/sections.js';
import { frameFor, sendPage, type UiContext } from '../ui-context.js';

/**
 * A one-time confirmation of the change just made travels to the page in a short-lived cookie, never
 * in the URL (as on the connected apps page). `__Host-` keeps other hosts from planting it.
 */
export const SECURITY_NOTICE_COOKIE = '__Host-gatehouse-security-notice';
export const SECURITY_NOTICE_OPTIONS = {
  path: '/',
  secure: true,
  httpOnly: true,
  sameSite: 'strict',
} as const;

/** GET /account/security: every section of SECURITY_SECTIONS for the signed-in user. */
export function registerSecurityRoutes(app: FastifyInstance, ui: UiContext): void {
  const base = ui.config.basePath;
  app.get(ENDPOINTS.accountSecurity.path, async function accountSecurity(request, reply) {
    const browser = await ui.browsers.load(request, reply);
    if (browser.user === undefined || browser.authentication === undefined) {
      return reply.redirect(`${base}/sign-in?next=/account/security`, 303);
    }
    return sendSecurityPage(ui, request, reply, browser as SignedInContext);
  });
}

/**
 * The security page with every section, for GET and for a form's answer: `replace` stands in for the
 * section with its id (the same form again, with the field in error marked), under `status`.
 */
export async function sendSecurityPage(
  ui: UiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  browser: SignedInContext,
  options: { status?: number; replace?: SecuritySection } = {},
): Promise<FastifyReply> {
  const sections = (await Promise.all(SECURITY_SECTIONS.map((source) => source(ui, browser))))
    .filter((section): section is SecuritySection => section !== undefined)
    .map((section) => (section.id === options.replace?.id ? options.replace : section));
  const notice = request.cookies[SECURITY_NOTICE_COOKIE];
  if (notice !== undefined) reply.clearCookie(SECURITY_NOTICE_COOKIE, SECURITY_NOTICE_OPTIONS);
  return sendPage(
    reply,
    options.status ?? 200,
    securityPage(frameFor(ui, browser), {
      sections,
      // Only short, known notices are set by our own routes; a planted long one is not shown.
      ...(notice !== undefined && notice.length <= 120 ? { notice } : {}),
    }),
  );
}
