import { html } from '../../html.js';
import { ageInDays, consolePage, time, type ConsoleFrame } from './console-layout.js';
import type { KeyView } from './signing-keys-pages.js';

export function dashboardPage(
  frame: ConsoleFrame,
  input: { keys: KeyView[]; clients: number | undefined; users: number | undefined; now: number },
): string {
  const active = input.keys.find((key) => key.status === 'active');
  const body = html`<h1>Dashboard</h1>
    <p class="lead">The state of this server, as its API reports it.</p>
    <dl class="facts">
      <dt>Active signing key</dt>
      <dd>
        ${
          active === undefined
            ? 'None'
            : html`<code>${active.kid}</code> (${active.alg}), created ${time(active.createdAt)}, age
                ${ageInDays(active.createdAt, input.now)}`
        }
      </dd>
      <dt>Signing keys in /jwks</dt>
      <dd>${input.keys.filter((key) => key.status !== 'revoked').length}</dd>
      <dt>Clients</dt>
      <dd>${input.clients ?? '—'}</dd>
      <dt>Users</dt>
      <dd>${input.users ?? '—'}</dd>
    </dl>
    <p class="muted small">Charts of the last hour are not in the console yet.</p>`;
  return consolePage(frame, 'dashboard', 'Dashboard', body);
}
