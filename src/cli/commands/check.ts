import { X509Certificate, createPrivateKey } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStoreProbe, sqliteFileOf, type StoreProbe } from '../../compose/store-admin.js';
import {
  flagOf,
  loadConfig,
  storeLocation,
  unknownVariableWarnings,
  variableOf,
  type GatehouseConfig,
  type SettingName,
} from '../../config.js';
import { systemClock } from '../../shared/clock.js';
import { isHelpFlag, parseCommandArgs } from '../args.js';
import { COMMANDS, GLOBAL_FLAGS } from '../command-table.js';
import { settingsFromFlags, type Cli } from '../context.js';
import { CHECK_HELP } from '../help.js';

interface CheckResult {
  check: string;
  ok: boolean;
  detail: string;
  /** Not a failure (exit 0), but a setting that will not serve as meant: printed as "warn". */
  warning?: true;
}

const DAY = 86_400;

/** "GATEHOUSE_TLS_CERT (--tls-cert)": how an operator sets `name`, as the settings table declares it. */
function variableAndFlag(name: SettingName): string {
  return `${variableOf(name)} (${flagOf(name)})`;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The TLS certificate serve would use: valid now, matching its key; its expiry is reported. */
function checkTls(config: GatehouseConfig): CheckResult {
  const check = 'TLS certificate';
  if (config.trustProxy && config.tlsCert === undefined) {
    return {
      check,
      ok: true,
      detail: `none: plain HTTP behind a TLS-terminating proxy (${flagOf('trustProxy')})`,
    };
  }
  const devDir = join(config.dataDir, 'tls');
  const certPath = config.tlsCert ?? join(devDir, 'cert.pem');
  const keyPath = config.tlsKey ?? join(devDir, 'key.pem');
  if ((config.tlsCert === undefined) !== (config.tlsKey === undefined)) {
    return {
      check,
      ok: false,
      detail: `${variableAndFlag('tlsCert')} and ${variableAndFlag('tlsKey')} go together`,
    };
  }
  if (config.tlsCert === undefined && !existsSync(certPath)) {
    return { check, ok: true, detail: `none yet: serve generates a development certificate in ${devDir}` };
  }
  try {
    const cert = new X509Certificate(readFileSync(certPath));
    const now = systemClock.now();
    const from = Math.floor(Date.parse(cert.validFrom) / 1000);
    const to = Math.floor(Date.parse(cert.validTo) / 1000);
    const expiry = new Date(to * 1000).toISOString();
    if (!cert.checkPrivateKey(createPrivateKey(readFileSync(keyPath)))) {
      return { check, ok: false, detail: `${keyPath} is not the key of ${certPath}` };
    }
    if (now < from) return { check, ok: false, detail: `${certPath} is not valid before ${cert.validFrom}` };
    if (now >= to) return { check, ok: false, detail: `${certPath} expired on ${expiry}` };
    const days = Math.floor((to - now) / DAY);
    const kind = config.tlsCert === undefined ? 'development certificate' : 'certificate';
    return { check, ok: true, detail: `${kind} ${certPath} valid until ${expiry} (${days} days)` };
  } catch (error) {
    return { check, ok: false, detail: `${certPath}: ${message(error)}` };
  }
}

/** Names that only this machine answers to: a certificate for localhost serves them. */
function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    hostname === '[::1]' ||
    /^127\.\d+\.\d+\.\d+$/.test(hostname)
  );
}

/**
 * The development certificate (dev-certificate.ts) names localhost, 127.0.0.1 and ::1 only, and is
 * self-signed: clients that reach the issuer by another name refuse it. Serve would use it, and the
 * issuer is another name: a deployment that forgot --tls-cert, or --trust-proxy behind its proxy.
 */
function devCertificateWarning(config: GatehouseConfig): CheckResult | undefined {
  const usesDevCertificate = !config.trustProxy && config.tlsCert === undefined;
  const host = URL.canParse(config.issuer) ? new URL(config.issuer).hostname : 'localhost';
  if (!usesDevCertificate || isLoopbackHost(host)) return undefined;
  const perServer =
    config.databaseUrl !== undefined && /^postgres(ql)?:/.test(config.databaseUrl)
      ? '; with PostgreSQL each server would also make a certificate of its own in its data directory'
      : '';
  return {
    check: 'certificate matches the issuer',
    ok: true,
    warning: true,
    detail:
      `the development certificate (self-signed, for localhost only) would serve the issuer ${config.issuer}, ` +
      `whose clients refuse it${perServer}: give ${flagOf('tlsCert')} and ${flagOf('tlsKey')} ` +
      `(${variableOf('tlsCert')}, ${variableOf('tlsKey')}), or, behind a TLS-terminating proxy, ` +
      `${flagOf('trustProxy')} (${variableOf('trustProxy')})`,
  };
}

/**
 * `gatehouse check`: everything a start needs, reported one line each, without creating or changing
 * anything (the store is only read).
 */
export async function runCheckCommand(argv: string[], cli: Cli): Promise<number> {
  if (isHelpFlag(argv[0])) {
    cli.io.stdout.write(CHECK_HELP);
    return 0;
  }
  const { values } = parseCommandArgs(argv, COMMANDS.check.flags, 'check', 0);
  if (values.help) {
    cli.io.stdout.write(CHECK_HELP);
    return 0;
  }
  // serve's own settings, so that what is checked is what `serve` with the same flags would run.
  const input = settingsFromFlags(values, { ...GLOBAL_FLAGS, ...COMMANDS.check.flags });
  const results: CheckResult[] = [];
  const notChecked = (check: string, why: string) =>
    results.push({ check, ok: false, detail: `not checked: ${why}` });
  let config: GatehouseConfig | undefined;
  try {
    config = loadConfig(input, cli.io.env, { createSecret: false });
    const warnings = unknownVariableWarnings(cli.io.env);
    results.push({
      check: 'configuration',
      ok: true,
      detail: warnings.length === 0 ? 'valid' : `valid; ${warnings.join('; ')}`,
    });
  } catch (error) {
    results.push({ check: 'configuration', ok: false, detail: message(error) });
  }

  let store: StoreProbe | undefined;
  let pending: string[] | undefined;
  try {
    const file = sqliteFileOf(config ?? storeLocation(input, cli.io.env));
    if (file !== undefined && !existsSync(file)) {
      results.push({
        check: 'store reachable',
        ok: false,
        detail: `no store at ${file}: run "gatehouse init"`,
      });
    } else if (config === undefined) {
      notChecked('store reachable', 'the configuration is not valid');
    } else {
      store = openStoreProbe(config);
      await store.ping();
      results.push({ check: 'store reachable', ok: true, detail: file ?? 'PostgreSQL' });
      pending = await store.pendingMigrations();
      results.push(
        pending.includes('0001-initial')
          ? {
              check: 'migrations current',
              ok: false,
              detail: 'no Gatehouse schema here: run "gatehouse init"',
            }
          : pending.length > 0
            ? {
                check: 'migrations current',
                ok: false,
                detail: `pending: ${pending.join(', ')}: run "gatehouse migrate"`,
              }
            : { check: 'migrations current', ok: true, detail: 'schema current' },
      );
    }
  } catch (error) {
    results.push({ check: 'store reachable', ok: false, detail: message(error) });
  }
  if (pending === undefined) notChecked('migrations current', 'the store was not reached');

  if (store !== undefined && config !== undefined && pending !== undefined) {
    try {
      const verdict = await store.verifySecret();
      results.push({
        check: 'secret opens the keys',
        ok: true,
        detail:
          verdict === 'new-store'
            ? 'no signing key yet; the first start records this secret'
            : verdict === 'check-value'
              ? 'the secret matches the one recorded in the store'
              : 'the secret opens the active signing key',
      });
    } catch (error) {
      results.push({ check: 'secret opens the keys', ok: false, detail: message(error) });
    }
  } else notChecked('secret opens the keys', 'the store or the configuration is not usable');
  await store?.close().catch(() => undefined);

  if (config !== undefined) {
    results.push(checkTls(config));
    const warning = devCertificateWarning(config);
    if (warning !== undefined) results.push(warning);
    results.push(
      config.issuer.startsWith('https://')
        ? { check: 'issuer is https', ok: true, detail: config.issuer }
        : {
            check: 'issuer is https',
            ok: false,
            detail: `${config.issuer}: OAuth endpoints must be served over TLS (RFC 6749 §3.1); set ${variableOf('issuer')} or ${flagOf('issuer')}`,
          },
    );
  } else {
    notChecked('TLS certificate', 'the configuration is not valid');
    notChecked('issuer is https', 'the configuration is not valid');
  }

  const ok = results.every((result) => result.ok);
  if (values.json) cli.io.stdout.write(JSON.stringify({ ok, checks: results }, null, 2) + '\n');
  else {
    for (const result of results) {
      const mark = !result.ok ? 'FAIL' : result.warning ? 'warn' : 'ok  ';
      cli.io.stdout.write(`${mark}  ${result.check}: ${result.detail}\n`);
    }
  }
  return ok ? 0 : 1;
}
