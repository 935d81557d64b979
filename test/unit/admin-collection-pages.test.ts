import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { discoveryWords } from '../../src/http/ui/pages/admin/identity-providers-pages.js';
import { initialAccessTokensPage } from '../../src/http/ui/pages/admin/registrations-pages.js';
import { resourcePath, resourcesPage } from '../../src/http/ui/pages/admin/resources-pages.js';
import { scopesPage } from '../../src/http/ui/pages/admin/scopes-pages.js';
import type { ConsoleFrame } from '../../src/http/ui/pages/admin/console-layout.js';

const frame: ConsoleFrame = {
  productName: 'Gatehouse',
  logoUrl: undefined,
  basePath: '/auth',
  username: 'ada',
  csrfToken: 'csrf-token-value',
  secondFactorPrompt: false,
};

describe('the console’s collection pages (decision 42)', () => {
  it('says a failed discovery in words an operator can act on, and leaves other problems as they are', () => {
    const cases: { detail: string; field?: string; expected: string }[] = [
      {
        field: 'issuer',
        detail: 'issuer: discovery failed at https://idp.example: the connection was refused',
        expected:
          'Gatehouse could not use the provider’s settings at https://idp.example/.well-known/openid-configuration: the connection was refused. Check the issuer’s address, and that this server can reach it',
      },
      {
        field: 'issuer',
        detail:
          'discovery failed at https://idp.example/: its metadata names the issuer https://other.example; give exactly that one',
        expected:
          'Gatehouse could not use the provider’s settings at https://idp.example/.well-known/openid-configuration: its metadata names the issuer https://other.example; give exactly that one. Check the issuer’s address, and that this server can reach it',
      },
      { field: 'issuer', detail: 'issuer: must be an https URL', expected: 'issuer: must be an https URL' },
      { field: 'name', detail: 'discovery failed at x: y', expected: 'discovery failed at x: y' },
    ];
    for (const { detail, field, expected } of cases) {
      const problem = { status: 400, detail, ...(field === undefined ? {} : { field }) };
      assert.equal(discoveryWords(problem)?.detail, expected, detail);
    }
    assert.equal(discoveryWords(undefined), undefined);
  });

  it('escapes what the API holds, and names a resource by its URI as one path segment', () => {
    const scopes = scopesPage(frame, {
      rows: [{ name: 'x:<b>', description: '<script>alert(1)</script>', createdAt: '', builtIn: false }],
      search: '"><img>',
      offset: 0,
      limit: 20,
      total: 1,
      values: { name: '', description: '' },
    });
    assert.ok(!scopes.includes('<script>alert'));
    assert.ok(!scopes.includes('"><img>'));
    assert.ok(scopes.includes('href="/auth/admin/scopes/x%3A%3Cb%3E"'));
    assert.ok(scopes.includes('value="csrf-token-value"'), 'every form carries the CSRF token');
    assert.equal(
      resourcePath(frame, 'https://api.example/v1?x=1'),
      '/auth/admin/resources/https%3A%2F%2Fapi.example%2Fv1%3Fx%3D1',
    );
    const resources = resourcesPage(frame, {
      rows: [{ uri: 'https://api.example/v1', name: '', scopes: [], createdAt: '' }],
      search: '',
      offset: 20,
      limit: 20,
      total: 45,
      values: { uri: '', name: '', scopes: '' },
    });
    assert.match(resources, /Showing 21–40 of 45/);
    assert.match(resources, /offset=0">Previous/);
    assert.match(resources, /offset=40">Next/);
  });

  it('shows an initial access token only on the answer that made it', () => {
    const page = (token?: string) =>
      initialAccessTokensPage(frame, {
        rows: [],
        offset: 0,
        limit: 20,
        total: 0,
        values: { expiresIn: '86400', scopes: '' },
        registration: 'off',
        ...(token === undefined ? {} : { token }),
      });
    assert.match(page('iat_made-now'), /id="initial-access-token">iat_made-now</);
    assert.ok(!page().includes('initial-access-token">'));
    assert.match(page(), /Dynamic registration is off/);
  });
});
