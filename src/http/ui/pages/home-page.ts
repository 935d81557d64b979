import { html } from '../html.js';
import { layout, type PageFrame } from './layout.js';

/** The issuer's root for a person who opens it in a browser: what this server is, and where to go. */
export function homePage(frame: PageFrame): string {
  const base = frame.basePath;
  const signedIn = frame.username !== undefined;
  const body = html` <h1>${frame.productName}</h1>
    <p class="lead">
      This server signs people in to applications (OpenID Connect) and lets them decide which applications may
      use their account (OAuth 2.0).
    </p>
    <ul class="links">
      ${signedIn ? '' : html`<li><a href="${base}/sign-in">Sign in</a></li>`}
      <li>
        <a href="${base}/account/apps">Connected apps</a>: the applications you have allowed, and revoking
        them
      </li>
      <li><a href="${base}/playground">Playground</a>: try every OAuth grant against this server</li>
      <li><a href="${base}/v1/openapi">API reference</a>: the management API (OpenAPI)</li>
      <li>
        <a href="${base}/.well-known/openid-configuration">OpenID Provider configuration</a>: the discovery
        document (OpenID Connect Discovery 1.0) that relying parties read to sign people in
      </li>
      <li>
        <a href="${base}/.well-known/oauth-authorization-server">Authorization server metadata</a>: the same
        endpoints for OAuth clients (RFC 8414)
      </li>
    </ul>`;
  return layout(frame, { title: 'Home', name: 'home', body });
}
