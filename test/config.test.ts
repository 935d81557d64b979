import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { ConfigError, loadConfig, unknownVariableWarnings } from '../src/config.js';

const SECRET = Buffer.alloc(32, 1).toString('base64url');

function dataDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function refused(env: NodeJS.ProcessEnv, message: RegExp): void {
  assert.throws(
    () => loadConfig({ dataDir: '/nonexistent' }, { GATEHOUSE_SECRET: SECRET, ...env }),
    (error: unknown) => error instanceof ConfigError && message.test(error.message),
  );
}

describe('configuration from the environment', () => {
  it('a malformed number names the variable, the unit, the range and the value', () => {
    refused(
      { GATEHOUSE_ACCESS_TOKEN_TTL: 'abc' },
      /^GATEHOUSE_ACCESS_TOKEN_TTL must be a whole number of seconds between 1 and 86400, got "abc"$/,
    );
    refused({ GATEHOUSE_ACCESS_TOKEN_TTL: '1.5' }, /GATEHOUSE_ACCESS_TOKEN_TTL .* got "1\.5"/);
    refused({ GATEHOUSE_ACCESS_TOKEN_TTL: '0' }, /GATEHOUSE_ACCESS_TOKEN_TTL/);
    refused(
      { GATEHOUSE_REFRESH_TOKEN_TTL: '30d' },
      /GATEHOUSE_REFRESH_TOKEN_TTL must be a whole number of seconds/,
    );
    refused(
      { GATEHOUSE_ID_TOKEN_TTL: '86401' },
      /^GATEHOUSE_ID_TOKEN_TTL must be a whole number of seconds between 1 and 86400, got "86401"$/,
    );
    refused({ GATEHOUSE_ID_TOKEN_TTL: '0' }, /GATEHOUSE_ID_TOKEN_TTL/);
    refused({ PORT: '99999' }, /^PORT must be a whole number between 1 and 65535, got "99999"$/);
    refused({ GATEHOUSE_LOCKOUT_ATTEMPTS: '-1' }, /GATEHOUSE_LOCKOUT_ATTEMPTS/);
    refused({ GATEHOUSE_RATE_LIMIT_TOKEN_PER_ADDRESS: 'many' }, /GATEHOUSE_RATE_LIMIT_TOKEN_PER_ADDRESS/);
    refused(
      { GATEHOUSE_MAX_PARAMETERS: 'x' },
      /GATEHOUSE_MAX_PARAMETERS must be a whole number of parameters/,
    );
  });

  it('GATEHOUSE_ID_TOKEN_TTL: an hour by default, or the seconds given (OpenID Connect ID tokens)', () => {
    const load = (env: NodeJS.ProcessEnv) =>
      loadConfig({ dataDir: '/nonexistent' }, { GATEHOUSE_SECRET: SECRET, ...env }).idTokenTtl;
    assert.equal(load({}), 3600);
    assert.equal(load({ GATEHOUSE_ID_TOKEN_TTL: '300' }), 300);
    assert.deepEqual(unknownVariableWarnings({ GATEHOUSE_ID_TOKEN_TTL: '300' }), []);
  });

  it('DPoP: nonces off by default (docs/decisions.md, decision 25), the proof window 60 s', () => {
    const load = (env: NodeJS.ProcessEnv) =>
      loadConfig({ dataDir: '/nonexistent' }, { GATEHOUSE_SECRET: SECRET, ...env });
    assert.equal(load({}).dpopNonce, 'off');
    assert.equal(load({}).dpopProofWindowSeconds, 60);
    assert.equal(load({ GATEHOUSE_DPOP_NONCE: 'required' }).dpopNonce, 'required');
    assert.equal(load({ GATEHOUSE_DPOP_PROOF_WINDOW: '30' }).dpopProofWindowSeconds, 30);
    assert.throws(
      () => load({ GATEHOUSE_DPOP_NONCE: 'on' }),
      /^ConfigError: GATEHOUSE_DPOP_NONCE must be one of required, off, got "on"$/,
    );
    assert.throws(
      () => load({ GATEHOUSE_DPOP_PROOF_WINDOW: '0' }),
      /GATEHOUSE_DPOP_PROOF_WINDOW must be a whole number/,
    );
    assert.deepEqual(
      unknownVariableWarnings({ GATEHOUSE_DPOP_NONCE: 'off', GATEHOUSE_DPOP_PROOF_WINDOW: '60' }),
      [],
    );
  });

  it('dynamic registration: off by default; its scopes, rate limit and unused days (docs/decisions.md, decision 20)', () => {
    const load = (env: NodeJS.ProcessEnv) =>
      loadConfig({ dataDir: '/nonexistent' }, { GATEHOUSE_SECRET: SECRET, ...env });
    const defaults = load({});
    assert.equal(defaults.dynamicRegistration, 'off');
    assert.deepEqual(defaults.dynamicRegistrationScopes, ['openid', 'profile', 'email', 'offline_access']);
    assert.equal(defaults.dynamicRegistrationRateLimit, 20);
    assert.equal(defaults.dynamicRegistrationUnusedDays, 7);
    const set = load({
      GATEHOUSE_DYNAMIC_REGISTRATION: 'open',
      GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES: ' openid  mcp:tools openid ',
      GATEHOUSE_DYNAMIC_REGISTRATION_RATE_LIMIT: '0',
      GATEHOUSE_DYNAMIC_REGISTRATION_UNUSED_DAYS: '0',
    });
    assert.equal(set.dynamicRegistration, 'open');
    assert.deepEqual(set.dynamicRegistrationScopes, ['openid', 'mcp:tools']);
    assert.equal(set.dynamicRegistrationRateLimit, 0);
    assert.equal(set.dynamicRegistrationUnusedDays, 0);
    assert.equal(load({ GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES: '' }).dynamicRegistrationScopes.length, 4);
    assert.equal(load({ GATEHOUSE_RATE_LIMITS: 'off' }).dynamicRegistrationRateLimit, 0);
    refused(
      { GATEHOUSE_DYNAMIC_REGISTRATION: 'on' },
      /^GATEHOUSE_DYNAMIC_REGISTRATION must be one of off, token, open, got "on"$/,
    );
    refused(
      { GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES: 'openid admin' },
      /GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES: admin is never open/,
    );
    refused({ GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES: 'a"b' }, /is not a scope name/);
    refused(
      { GATEHOUSE_DYNAMIC_REGISTRATION_UNUSED_DAYS: '3651' },
      /GATEHOUSE_DYNAMIC_REGISTRATION_UNUSED_DAYS/,
    );
    assert.deepEqual(unknownVariableWarnings({ GATEHOUSE_DYNAMIC_REGISTRATION: 'open' }), []);
  });

  it('RFC 9126: GATEHOUSE_REQUIRE_PAR off by default; a pushed request lives 60 s unless set, never over 90', () => {
    const load = (env: NodeJS.ProcessEnv, input = {}) =>
      loadConfig({ dataDir: '/nonexistent', ...input }, { GATEHOUSE_SECRET: SECRET, ...env });
    assert.equal(load({}).requirePushedAuthorizationRequests, false);
    assert.equal(load({ GATEHOUSE_REQUIRE_PAR: 'true' }).requirePushedAuthorizationRequests, true);
    assert.deepEqual(unknownVariableWarnings({ GATEHOUSE_REQUIRE_PAR: 'true' }), []);
    refused({ GATEHOUSE_REQUIRE_PAR: 'yes' }, /^GATEHOUSE_REQUIRE_PAR must be true or false, got "yes"$/);
    assert.equal(load({}).pushedAuthorizationRequestTtl, 60);
    assert.equal(load({}, { pushedAuthorizationRequestTtl: 90 }).pushedAuthorizationRequestTtl, 90);
    for (const ttl of [0, 91, 1.5]) {
      assert.throws(() => load({}, { pushedAuthorizationRequestTtl: ttl }), ConfigError);
    }
  });

  it('RFC 8628: device codes live 600 s and are polled every 5 s; 10 wrong user codes per source in 15 minutes', () => {
    const load = (env: NodeJS.ProcessEnv) =>
      loadConfig({ dataDir: '/nonexistent' }, { GATEHOUSE_SECRET: SECRET, ...env });
    const defaults = load({});
    assert.deepEqual(
      [
        defaults.deviceCodeTtl,
        defaults.deviceCodeInterval,
        defaults.userCodeFailuresPerSource,
        defaults.userCodeFailureWindowSeconds,
      ],
      [600, 5, 10, 900],
    );
    const set = load({ GATEHOUSE_DEVICE_CODE_TTL: '300', GATEHOUSE_USER_CODE_ATTEMPTS: '20' });
    assert.deepEqual([set.deviceCodeTtl, set.userCodeFailuresPerSource], [300, 20]);
    assert.deepEqual(
      unknownVariableWarnings({ GATEHOUSE_DEVICE_CODE_TTL: '300', GATEHOUSE_USER_CODE_ATTEMPTS: '20' }),
      [],
    );
    refused(
      { GATEHOUSE_DEVICE_CODE_TTL: '59' },
      /^GATEHOUSE_DEVICE_CODE_TTL must be a whole number of seconds between 60 and 3600, got "59"$/,
    );
    refused({ GATEHOUSE_USER_CODE_ATTEMPTS: '0' }, /GATEHOUSE_USER_CODE_ATTEMPTS must be a whole number/);
  });

  it('mail (decision 35): to the log unless GATEHOUSE_SMTP_URL is smtp:// or smtps://, never repeated in a message', () => {
    const load = (env: NodeJS.ProcessEnv) =>
      loadConfig(
        { dataDir: '/nonexistent', issuer: 'https://id.example.com' },
        { GATEHOUSE_SECRET: SECRET, ...env },
      );
    assert.equal(load({}).smtpUrl, undefined);
    assert.equal(load({}).mailFrom, 'no-reply@id.example.com');
    const url = 'smtps://mailer:p%40ss@smtp.example.com:465';
    assert.equal(load({ GATEHOUSE_SMTP_URL: url }).smtpUrl, url);
    assert.equal(
      load({ GATEHOUSE_SMTP_URL: 'smtp://smtp.example.com:587' }).smtpUrl,
      'smtp://smtp.example.com:587',
    );
    assert.equal(
      load({ GATEHOUSE_MAIL_FROM: 'Example ID <id@example.com>' }).mailFrom,
      'Example ID <id@example.com>',
    );
    for (const wrong of [
      'https://mailer:hunter22@smtp.example.com',
      'mailer:hunter22@smtp.example.com',
      'smtp://',
    ]) {
      assert.throws(
        () => load({ GATEHOUSE_SMTP_URL: wrong }),
        (error: unknown) =>
          error instanceof ConfigError &&
          /^GATEHOUSE_SMTP_URL must be smtp:\/\/user:password@host:587 or smtps:\/\/user:password@host:465 .*unset it to write mail to the log instead$/.test(
            error.message,
          ) &&
          !error.message.includes('hunter22'),
      );
    }
    refused({ GATEHOUSE_MAIL_FROM: 'nobody' }, /^GATEHOUSE_MAIL_FROM must be an address/);
    refused({ GATEHOUSE_MAIL_FROM: 'a@example.com\r\nBcc: b@example.com' }, /^GATEHOUSE_MAIL_FROM must be/);
    assert.deepEqual(
      unknownVariableWarnings({ GATEHOUSE_SMTP_URL: url, GATEHOUSE_MAIL_FROM: 'a@example.com' }),
      [],
    );
  });

  it('booleans are true or false, nothing else; enumerations name their values', () => {
    for (const name of [
      'GATEHOUSE_TRUST_PROXY',
      'GATEHOUSE_ALLOW_PLAIN_PKCE',
      'GATEHOUSE_ALLOW_ACCESS_TOKEN_IN_QUERY',
    ]) {
      for (const value of ['yes', '1', 'TRUE', 'on']) {
        refused({ [name]: value }, new RegExp(`^${name} must be true or false, got "${value}"$`));
      }
    }
    const on = loadConfig({ dataDir: '/x' }, { GATEHOUSE_SECRET: SECRET, GATEHOUSE_TRUST_PROXY: 'true' });
    assert.equal(on.trustProxy, true);
    refused(
      { GATEHOUSE_SQLITE_SYNCHRONOUS: 'full' },
      /GATEHOUSE_SQLITE_SYNCHRONOUS must be one of FULL, NORMAL/,
    );
    refused({ GATEHOUSE_LOG_LEVEL: 'verbose' }, /GATEHOUSE_LOG_LEVEL must be one of fatal, error/);
    refused({ GATEHOUSE_RATE_LIMITS: 'of' }, /GATEHOUSE_RATE_LIMITS must be one of on, off/);
    refused({ GATEHOUSE_ISSUER: 'auth.example' }, /GATEHOUSE_ISSUER must be an absolute https:\/\//);
    refused({ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres/);
    refused({ GATEHOUSE_BASE_PATH: 'api' }, /GATEHOUSE_BASE_PATH/);
  });

  it('the limits docs/limits.md names can be set', () => {
    const config = loadConfig(
      { dataDir: '/x' },
      {
        GATEHOUSE_SECRET: SECRET,
        GATEHOUSE_MAX_PARAMETERS: '32',
        GATEHOUSE_MAX_PARAMETER_BYTES: '4096',
        GATEHOUSE_LOCKOUT_SOURCE_ATTEMPTS: '250',
      },
    );
    assert.equal(config.maxParameters, 32);
    assert.equal(config.maxParameterBytes, 4096);
    assert.equal(config.passwordFailuresPerSource, 250);
  });

  it('unknown GATEHOUSE_* variables are reported, with the closest known name', () => {
    const env = {
      GATEHOUSE_ACESS_TOKEN_TTL: '60',
      GATEHOUSE_TRUST_PROXY: 'true',
      GATEHOUSE_SOMETHING_ELSE_ENTIRELY: 'x',
      HOME: '/root',
    };
    assert.deepEqual(unknownVariableWarnings(env, []), [
      'unknown environment variable GATEHOUSE_ACESS_TOKEN_TTL is ignored (did you mean GATEHOUSE_ACCESS_TOKEN_TTL?)',
      'unknown environment variable GATEHOUSE_SOMETHING_ELSE_ENTIRELY is ignored',
    ]);
  });

  it('no secret is generated for PostgreSQL, nor where the command may not create the store', (t) => {
    const dir = dataDir(t);
    assert.throws(
      () => loadConfig({ dataDir: dir }, { DATABASE_URL: 'postgres://db.example/gatehouse' }),
      /no server secret for a PostgreSQL database: set GATEHOUSE_SECRET or GATEHOUSE_SECRET_FILE/,
    );
    assert.throws(
      () => loadConfig({ dataDir: dir }, {}, { createSecret: false }),
      /no server secret: set GATEHOUSE_SECRET or GATEHOUSE_SECRET_FILE/,
    );
    assert.ok(!existsSync(join(dir, 'secret')));
    assert.throws(
      () => loadConfig({ dataDir: dir }, { GATEHOUSE_SECRET_FILE: join(dir, 'missing') }),
      /GATEHOUSE_SECRET_FILE: cannot read/,
    );
    // A development SQLite store may still have one generated, once.
    const first = loadConfig({ dataDir: dir }, {});
    assert.ok(existsSync(join(dir, 'secret')));
    assert.deepEqual(loadConfig({ dataDir: dir }, {}, { createSecret: false }).secret, first.secret);
  });
});
