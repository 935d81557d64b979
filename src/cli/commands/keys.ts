import { deriveServerKeys } from '../../compose/gatehouse.js';
import { KeyRing } from '../../core/key-ring.js';
import { systemClock } from '../../shared/clock.js';
import { UsageError, isHelpFlag, parseCommandArgs } from '../args.js';
import { printJson, type WithStorage } from '../context.js';
import { KEYS_HELP } from '../help.js';

export async function runKeysCommand(argv: string[], withStorage: WithStorage): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseCommandArgs(rest, {});
  if (values.help || action === undefined || isHelpFlag(action)) {
    process.stdout.write(KEYS_HELP);
    if (action === undefined) throw new UsageError('keys needs an action: rotate, list or revoke');
    return;
  }
  await withStorage(values, async (context) => {
    const { storage, json, out, config } = context;
    const keyRing = () =>
      new KeyRing({
        store: storage.signingKeys,
        keyEncryptionKey: deriveServerKeys(config.secret).keyEncryptionKey,
        clock: systemClock,
        algorithm: config.signingAlgorithm,
        retiredKeyRetentionSeconds: config.retiredKeyRetentionSeconds,
        refreshIntervalSeconds: config.keyRefreshIntervalSeconds,
      });
    switch (action) {
      case 'rotate': {
        const kid = await keyRing().rotate();
        if (json) printJson(context, { kid, alg: config.signingAlgorithm });
        else out.write(`New signing key ${kid} is active; running servers pick it up within seconds.\n`);
        return;
      }
      case 'list': {
        const keys = (await storage.signingKeys.list()).map((key) => ({
          kid: key.kid,
          alg: key.alg,
          status: key.revokedAt !== null ? 'revoked' : key.retiredAt === null ? 'active' : 'retired',
          created_at: new Date(key.createdAt * 1000).toISOString(),
          retired_at: key.retiredAt === null ? null : new Date(key.retiredAt * 1000).toISOString(),
          revoked_at: key.revokedAt === null ? null : new Date(key.revokedAt * 1000).toISOString(),
        }));
        if (json) printJson(context, keys);
        else for (const key of keys) out.write(`${key.kid}  ${key.alg}  ${key.status}  ${key.created_at}\n`);
        return;
      }
      case 'revoke': {
        const kid = positionals[0];
        if (kid === undefined) throw new UsageError('keys revoke needs a KID (see gatehouse keys list)');
        const revoked = await keyRing().revoke(kid);
        if (revoked === undefined) throw new Error(`no signing key with kid ${kid}`);
        const seconds = config.keyRefreshIntervalSeconds;
        if (json) printJson(context, { revoked: kid, replacement: revoked.replacement ?? null });
        else if (revoked.alreadyRevoked) out.write(`Signing key ${kid} was already revoked.\n`);
        else {
          if (revoked.replacement !== undefined)
            out.write(`New signing key ${revoked.replacement} is active.\n`);
          out.write(
            `Revoked signing key ${kid}: it is gone from /jwks and the tokens it signed are refused; ` +
              `running servers stop using it within ${seconds} seconds.\n`,
          );
        }
        return;
      }
      default:
        throw new UsageError(`unknown keys action "${action}"`);
    }
  });
}
