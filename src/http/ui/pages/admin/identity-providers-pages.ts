import { html, SafeHtml } from '../../html.js';
import type { ApiProblem } from '../../admin/admin-api.js';
import {
  consolePage,
  csrf,
  formProblem,
  inputField,
  notice,
  pager,
  time,
  type ConsoleFrame,
  confirmationPage,
} from './console-layout.js';

/**
 * The console's identity providers (decisions 39 and 42): the list paged by /v1/identity-providers,
 * a form to add an OpenID Provider by discovery (issuer, client id, client secret), a provider's page
 * with the redirect URI to register upstream, an edit form, and a confirmation before a delete. The
 * client secret is write-only: no page ever shows it, only whether one is kept. The form to add one is
 * on the list page (not at /admin/identity-providers/new): `new` is a provider id like any other.
 */

export interface ProviderRow {
  id: string;
  name: string;
  kind: string;
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint: string;
  clientId: string;
  clientAuth: string;
  clientSecretSet: boolean;
  scopes: string[];
  redirectUri: string;
  createdAt: string;
  updatedAt: string;
}

export interface ProviderFormValues {
  name: string;
  issuer: string;
  clientId: string;
  scopes: string;
}

// A problem naming another field (`id` taken, a claim mapping) is shown above the form.
const PROVIDER_FIELDS = ['name', 'issuer', 'client_id', 'client_secret', 'scopes'] as const;
const providerPath = (frame: ConsoleFrame, id: string) =>
  `${frame.basePath}/admin/identity-providers/${encodeURIComponent(id)}`;

/**
 * A failed discovery in words an operator can act on: the API says `discovery failed at ISSUER: WHY`
 * (decision 39); the page says where Gatehouse looked (OpenID Connect Discovery 1.0 §4) and why.
 */
export function discoveryWords(problem: ApiProblem | undefined): ApiProblem | undefined {
  if (problem?.field !== 'issuer') return problem;
  // The API's detail may name the field first (`issuer: discovery failed at …`).
  const match = /^(?:issuer: )?discovery failed at (\S+?): (.*)$/s.exec(problem.detail.trim());
  if (match === null) return problem;
  const [, issuer = '', why = ''] = match;
  const where = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  return {
    ...problem,
    detail: `Gatehouse could not use the provider’s settings at ${where}: ${why.replace(/\.$/, '')}. Check the issuer’s address, and that this server can reach it`,
  };
}

function providerFields(
  values: ProviderFormValues,
  problem: ApiProblem | undefined,
  secretSet: boolean | undefined,
): SafeHtml {
  return html`${inputField({ name: 'name', label: 'Name', value: values.name, problem, required: true, hint: 'Shown on the sign-in page: “Continue with NAME”.' })}
  ${inputField({
    name: 'issuer',
    label: 'Issuer',
    value: values.issuer,
    problem,
    required: true,
    hint: 'The OpenID Provider’s issuer URL (https); its settings are read by discovery when you save.',
  })}
  ${inputField({ name: 'client_id', label: 'Client ID', value: values.clientId, problem, required: true, hint: 'The client ID the provider issued to this server.' })}
  ${inputField({
    name: 'client_secret',
    label: 'Client secret',
    value: '',
    type: 'password',
    problem,
    hint:
      secretSet === undefined
        ? 'The client secret the provider issued. It is stored sealed and never shown again.'
        : secretSet
          ? 'A secret is kept (never shown). Leave empty to keep it; type a new one to replace it.'
          : 'No secret is kept. Type one to use client_secret_basic.',
  })}
  ${inputField({
    name: 'scopes',
    label: 'Scopes',
    value: values.scopes,
    problem,
    hint: 'Asked of the provider, separated by spaces; openid email profile when left empty.',
  })}`;
}

export function identityProvidersPage(
  frame: ConsoleFrame,
  input: {
    rows: ProviderRow[];
    offset: number;
    limit: number;
    total: number;
    notice?: string;
    values: ProviderFormValues;
    problem?: ApiProblem;
  },
): string {
  const base = frame.basePath;
  const problem = discoveryWords(input.problem);
  const body = html`<h1>Identity providers</h1>
    <p class="lead">Other sign-ins people may use here (“Continue with …”).</p>
    ${notice(input.notice)}
    <div class="toolbar">
      <a class="button primary" href="#new-provider">New identity provider</a>
    </div>
    ${
      input.rows.length === 0
        ? html`<p class="empty">No identity provider yet.</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">ID</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Issuer or authorization endpoint</th>
                </tr>
              </thead>
              <tbody>
                ${input.rows.map(
                  (row) =>
                    html`<tr>
                      <td><a href="${providerPath(frame, row.id)}">${row.name}</a></td>
                      <td><code>${row.id}</code></td>
                      <td>${row.kind === 'oidc' ? 'OpenID Connect' : 'OAuth 2.0'}</td>
                      <td><code>${row.issuer || row.authorizationEndpoint}</code></td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${pager(`${base}/admin/identity-providers`, {}, input.offset, input.limit, input.total)}
    <h2 class="spaced" id="new-provider">New identity provider</h2>
    <p class="muted small">
      An OpenID Provider, found by discovery. A plain OAuth 2.0 provider (its three endpoints) is added with
      <code>gatehouse idps create</code> or <code>/v1/identity-providers</code>.
    </p>
    ${formProblem(problem, PROVIDER_FIELDS)}
    <form method="post" action="${base}/admin/identity-providers" class="stack" novalidate>
      ${csrf(frame)} ${providerFields(input.values, problem, undefined)}
      <div class="actions"><button type="submit" class="primary">Create</button></div>
    </form>`;
  return consolePage(frame, 'identity-providers', 'Identity providers', body);
}

export function identityProviderPage(
  frame: ConsoleFrame,
  input: { provider: ProviderRow; values: ProviderFormValues; notice?: string; problem?: ApiProblem },
): string {
  const { provider } = input;
  const path = providerPath(frame, provider.id);
  const problem = discoveryWords(input.problem);
  const oidc = provider.kind === 'oidc';
  const body = html`<h1>${provider.name}</h1>
    ${notice(input.notice)}
    <div class="caution" role="note">
      <p><strong>Redirect URI to register at the provider</strong></p>
      <p><code class="secret" id="redirect-uri">${provider.redirectUri}</code></p>
    </div>
    <dl class="facts">
      <dt>ID</dt>
      <dd><code id="provider-id">${provider.id}</code></dd>
      <dt>Kind</dt>
      <dd>${oidc ? 'OpenID Connect (found by discovery)' : 'OAuth 2.0'}</dd>
      ${
        oidc
          ? html`<dt>Issuer</dt>
              <dd><code>${provider.issuer}</code></dd>`
          : ''
      }
      <dt>Authorization endpoint</dt>
      <dd><code>${provider.authorizationEndpoint || '—'}</code></dd>
      <dt>Token endpoint</dt>
      <dd><code>${provider.tokenEndpoint || '—'}</code></dd>
      <dt>Userinfo endpoint</dt>
      <dd><code>${provider.userinfoEndpoint || '—'}</code></dd>
      <dt>Client ID</dt>
      <dd><code>${provider.clientId}</code></dd>
      <dt>Client authentication</dt>
      <dd>${provider.clientAuth}</dd>
      <dt>Client secret</dt>
      <dd id="client-secret-state">${provider.clientSecretSet ? 'Kept, sealed (never shown)' : 'None'}</dd>
      <dt>Scopes asked</dt>
      <dd>${provider.scopes.join(' ') || '—'}</dd>
      <dt>Updated</dt>
      <dd>${time(provider.updatedAt)}</dd>
    </dl>
    <h2>Edit</h2>
    ${
      oidc
        ? html`${formProblem(problem, PROVIDER_FIELDS)}
            <form method="post" action="${path}" class="stack" novalidate>
              ${csrf(frame)} ${providerFields(input.values, problem, provider.clientSecretSet)}
              <div class="actions"><button type="submit" class="primary">Save</button></div>
            </form>`
        : html`<p>
            A plain OAuth 2.0 provider is changed with <code>gatehouse idps update ${provider.id}</code> or
            <code>PATCH /v1/identity-providers/${provider.id}</code>.
          </p>`
    }
    <h2 class="spaced">Removal</h2>
    <div class="actions"><a class="button danger" href="${path}/delete">Delete…</a></div>`;
  return consolePage(frame, 'identity-providers', provider.name, body);
}

export function confirmDeleteIdentityProviderPage(frame: ConsoleFrame, provider: ProviderRow): string {
  const path = providerPath(frame, provider.id);
  return confirmationPage(frame, 'identity-providers', {
    title: `Delete ${provider.name}`,
    heading: html`Delete ${provider.name}?`,
    caution: html`<p>
      “Continue with ${provider.name}” leaves every sign-in page. Every user’s link through it goes with it,
      so those users no longer sign in through it, and clients that named it no longer offer it. This cannot
      be undone.
    </p>`,
    action: `${path}/delete`,
    button: 'Delete identity provider',
    cancel: `${path}`,
  });
}
