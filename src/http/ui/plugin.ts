import { readFileSync } from 'node:fs';
import cookie from '@fastify/cookie';
import formBody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyError, FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { GatehouseConfig } from '../../config.js';
import type { Engine } from '../../core/engine.js';
import { ICON_SVG } from './assets/icon.js';
import { STYLESHEET } from './assets/stylesheet.js';
import { BrowserContexts } from './browser-context.js';
import { contentSecurityPolicy } from './content-security-policy.js';
import { CsrfTokens } from './csrf.js';
import type { InProcessCaller } from './admin/admin-api.js';
import { registerAdminRoutes } from './routes/admin-routes.js';
import { registerAccountRoutes } from './routes/account-routes.js';
import { registerSecurityRoutes } from './routes/security-routes.js';
import { registerPasskeyRoutes } from './routes/passkey-routes.js';
import { registerMailRoutes } from './routes/mail-routes.js';
import { registerAccountSecurityRoutes } from './routes/account-security-routes.js';
import { registerAssetRoutes, type StaticAsset } from './routes/asset-routes.js';
import { registerAuthorizeRoutes } from './routes/authorize-routes.js';
import { registerDeviceRoutes } from './routes/device-routes.js';
import { registerFederationRoutes } from './routes/federation-routes.js';
import { registerHomeRoutes } from './routes/home-routes.js';
import { registerLogoutRoutes } from './routes/logout-routes.js';
import { registerPlaygroundRoutes } from './routes/playground-routes.js';
import { registerSessionRoutes } from './routes/session-routes.js';
import { sendMessage, type UiContext } from './ui-context.js';
import { ENDPOINTS } from '../../config/endpoints.js';
import { deriveKey } from '../../shared/crypto.js';
import { passkeyPendingSignIn, registerSecondFactorRoutes } from './routes/second-factor-routes.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from '../store-unavailable.js';

/**
 * The playground script, as tsc compiled it next to this module (so it is found from any output
 * folder). The source-map comment is dropped: the map is not served.
 */
function compiledScript(name: string): string {
  const source = readFileSync(new URL(`./browser/${name}.js`, import.meta.url), 'utf8');
  return source.replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
}

export interface BrowserUiDependencies {
  config: GatehouseConfig;
  engine: Engine;
  /** Purpose-bound key for cookies and CSRF tokens (compose/gatehouse.ts derives it). */
  cookieSecret: Buffer;
  /**
   * The root application's in-process request (Fastify's inject): the admin console's way to /token
   * and /v1 (decision 42). Without it the console is not served.
   */
  callApi?: InProcessCaller;
}

/**
 * Everything a person sees: /authorize, sign-in, consent, connected apps, the playground, and their
 * assets. Encapsulated, so its cookie parsing, form parsing, security headers and HTML error pages
 * apply to these routes only.
 */
export function browserUi(deps: BrowserUiDependencies): FastifyPluginAsync {
  return async function browserPages(app: FastifyInstance) {
    const { config, engine } = deps;
    // Signed cookies (the pending sign-in of a second factor, decision 34) under their own subkey.
    await app.register(cookie, { secret: deriveKey(deps.cookieSecret, 'signed-cookies') });
    await app.register(formBody);
    await app.register(helmet, {
      // Set below per reply: form-action must name the client a page redirects to.
      contentSecurityPolicy: false,
      frameguard: { action: 'deny' },
      // Sent by the app for every route already (docs/decisions.md, decision 6).
      strictTransportSecurity: false,
      referrerPolicy: { policy: 'no-referrer' },
    });
    app.addHook('onSend', function pagePolicy(_request, reply, payload, done) {
      reply.header('content-security-policy', contentSecurityPolicy(reply, config.logoUrl));
      done(null, payload);
    });

    const ui: UiContext = {
      config,
      engine,
      browsers: new BrowserContexts(engine.browserSessions, new CsrfTokens(deps.cookieSecret)),
    };

    app.setErrorHandler(function pageError(error: FastifyError, request, reply) {
      const status = error.statusCode ?? 500;
      if (status === 413) return sendMessage(ui, reply, 413, 'Too much data', 'The form sent was too large.');
      if (status >= 400 && status < 500) {
        return sendMessage(ui, reply, status, 'Bad request', 'The request could not be understood.');
      }
      if (isStoreUnavailable(error)) {
        request.log.warn({ err: { message: error.message } }, 'store unavailable');
        reply.header('retry-after', String(STORE_RETRY_AFTER_SECONDS));
        return sendMessage(ui, reply, 503, 'Temporarily unavailable', 'Please try again in a moment.');
      }
      // Only the error: never the URL or body, which may hold codes, tokens or passwords.
      request.log.error({ err: error }, 'page failed');
      return sendMessage(ui, reply, 500, 'Something went wrong', 'Please try again in a moment.');
    });

    const assets: StaticAsset[] = [
      { path: `${ENDPOINTS.assets.path}/style`, contentType: 'text/css; charset=utf-8', body: STYLESHEET },
      { path: `${ENDPOINTS.assets.path}/icon`, contentType: 'image/svg+xml', body: ICON_SVG },
      {
        path: `${ENDPOINTS.assets.path}/playground`,
        contentType: 'text/javascript; charset=utf-8',
        body: compiledScript('playground'),
      },
      {
        path: `${ENDPOINTS.assets.path}/form-post`,
        contentType: 'text/javascript; charset=utf-8',
        body: compiledScript('form-post'),
      },
      {
        path: `${ENDPOINTS.assets.path}/passkey`,
        contentType: 'text/javascript; charset=utf-8',
        body: compiledScript('passkey'),
      },
    ];
    registerAssetRoutes(app, assets);
    registerAuthorizeRoutes(app, ui);
    registerSessionRoutes(app, ui);
    // Decision 40: the upstream flow's cookie is sealed under its own subkey.
    registerFederationRoutes(app, ui, deriveKey(deps.cookieSecret, 'upstream-state'));
    registerDeviceRoutes(app, ui);
    registerAccountRoutes(app, ui);
    registerSecurityRoutes(app, ui);
    registerPasskeyRoutes(app, ui, passkeyPendingSignIn(ui));
    registerMailRoutes(app, ui);
    registerSecondFactorRoutes(app, ui);
    registerAccountSecurityRoutes(app, ui);
    registerLogoutRoutes(app, ui);
    registerPlaygroundRoutes(app, ui);
    if (deps.callApi !== undefined) {
      // Decision 42: the console's cookies are sealed under their own subkey.
      registerAdminRoutes(app, ui, {
        key: deriveKey(deps.cookieSecret, 'admin-console'),
        callApi: deps.callApi,
      });
    }
    registerHomeRoutes(app, ui);
  };
}
