import type { Client } from '../../../core/model.js';
import { html, SafeHtml } from '../html.js';
import { layout, type PageFrame } from './layout.js';

/** What the playground script needs to know about a client (never its secret: it only has a hash). */
export interface PlaygroundClient {
  id: string;
  name: string;
  public: boolean;
  grantTypes: string[];
  scopes: string[];
  redirectUris: string[];
  tokenType: string;
}

export const playgroundClient = (client: Client): PlaygroundClient => ({
  id: client.id,
  name: client.name,
  public: client.isPublic,
  grantTypes: client.grantTypes,
  scopes: client.scopes,
  redirectUris: client.redirectUris,
  tokenType: client.tokenType,
});

/**
 * JSON inside a non-executed <script type="application/json"> data block. `<` is escaped so that no
 * value (a client name containing "</script>") can end the block early.
 */
function jsonDataBlock(id: string, value: unknown): SafeHtml {
  const json = JSON.stringify(value).replace(/</g, '\\u003c');
  return new SafeHtml(`<script type="application/json" id="${id}">${json}</script>`);
}

export function playgroundPage(frame: PageFrame, clients: PlaygroundClient[]): string {
  // The grant buttons are rendered disabled: they only work through the playground script, which
  // enables each one that the chosen client may use once it has run (a module script runs after parsing).
  const body = html` <h1>OAuth playground</h1>
    <p class="lead">
      Run every grant against this server from your browser and see each request and response, with the claims
      of every access token decoded. Register
      <code id="callback-url">${frame.basePath}/playground/callback</code> as a redirect URI of a client to
      use it here: only such clients are listed.
    </p>
    <div class="playground">
      <section aria-labelledby="setup-heading">
        <h2 id="setup-heading">Choose a client</h2>
        <div class="stack">
          ${
            clients.length === 0
              ? html`<p class="error" role="alert">
                  No client has this page's callback as a redirect URI yet. Register one, for example:
                  <code
                    >gatehouse clients create --name Playground --redirect-uri
                    https://localhost:8443/playground/callback --grant-types
                    authorization_code,implicit,password,client_credentials,refresh_token --scopes
                    profile</code
                  >
                </p>`
              : ''
          }
          <div class="field">
            <label for="client">Client</label>
            <select id="client">
              ${clients.map((client) => html`<option value="${client.id}">${client.name} (${client.id})</option>`)}
            </select>
            <p class="hint" id="client-facts" aria-live="polite"></p>
          </div>
          <div class="field">
            <label for="secret">Client secret</label>
            <input id="secret" type="password" autocomplete="off" spellcheck="false" />
            <p class="hint">Not needed for public clients. Kept in this browser tab only.</p>
          </div>
          <div class="field">
            <label for="scope">Scope</label>
            <input id="scope" spellcheck="false" autocapitalize="none" />
          </div>
        </div>
        <h2 class="spaced">Run a grant</h2>
        <div class="grants">
          <button type="button" class="primary" data-grant="authorization_code" disabled>
            Authorization code with PKCE
          </button>
          <button type="button" data-grant="implicit" disabled>Implicit</button>
          <fieldset class="stack">
            <legend>Resource owner password</legend>
            <div class="field">
              <label for="pg-username">User name for the password grant</label>
              <input id="pg-username" autocomplete="off" spellcheck="false" autocapitalize="none" />
            </div>
            <div class="field">
              <label for="pg-password">Password for the password grant</label>
              <input id="pg-password" type="password" autocomplete="off" />
            </div>
            <button type="button" data-grant="password" disabled>Password</button>
          </fieldset>
          <button type="button" data-grant="client_credentials" disabled>Client credentials</button>
          <div class="field">
            <label for="refresh-token">Refresh token</label>
            <input id="refresh-token" spellcheck="false" autocomplete="off" />
          </div>
          <button type="button" data-grant="refresh_token" disabled>Refresh</button>
        </div>
      </section>
      <section aria-labelledby="log-heading">
        <h2 id="log-heading">Requests and responses</h2>
        <p class="hint"><button type="button" class="link" id="clear-log">Clear</button></p>
        <div id="log" class="log" aria-live="polite"></div>
      </section>
    </div>
    ${jsonDataBlock('playground-clients', clients)}`;
  return layout(frame, {
    title: 'OAuth playground',
    name: 'playground',
    body,
    scripts: ['/assets/playground'],
    wide: true,
  });
}

/** The redirect target of the playground: its script reads the response and clears the address bar. */
export function playgroundCallbackPage(frame: PageFrame): string {
  const body = html` <h1>Playground callback</h1>
    <p id="callback-status" role="status">Reading the authorization response…</p>
    <div id="log" class="log" aria-live="polite"></div>
    <p class="spaced"><a href="${frame.basePath}/playground">Back to the playground</a></p>`;
  return layout(frame, {
    title: 'Playground callback',
    name: 'playground-callback',
    body,
    scripts: ['/assets/playground'],
    wide: true,
  });
}
