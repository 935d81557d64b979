import { CLI_AUDIT } from '../../core/audit/audit-log.js';
import { viewSigningKey } from '../../core/keys/signing-key-registry.js';
import { UsageError, isHelpFlag, parseCommandArgs } from '../args.js';
import { printJson, type Cli } from '../context.js';
import { KEYS_HELP } from '../help.js';

export async function runKeysCommand(argv: string[], cli: Cli): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseCommandArgs(rest, {});
  if (values.help || action === undefined || isHelpFlag(action)) {
    cli.io.stdout.write(KEYS_HELP);
    if (action === undefined) throw new UsageError('keys needs an action: rotate, list or revoke');
    return;
  }
  await cli.withEngine(values, async (context) => {
    const { engine, json, out, config } = context;
    switch (action) {
      case 'rotate': {
        const { kid, kids } = await engine.signingKeys.rotateAll(CLI_AUDIT);
        // kid and alg: the access-token key, as before; keys: every new key (ID tokens' too).
        if (json) printJson(context, { kid, alg: config.signingAlgorithm, keys: kids });
        else {
          for (const key of kids) out.write(`New ${key.alg} signing key ${key.kid} is active.\n`);
          out.write('Running servers pick them up within seconds.\n');
        }
        return;
      }
      case 'list': {
        // As /v1 shows them, less the public key itself.
        const keys = (await engine.signingKeys.list())
          .map(viewSigningKey)
          .map(({ kid, alg, status, created_at, retired_at, revoked_at }) => ({
            kid,
            alg,
            status,
            created_at,
            retired_at,
            revoked_at,
          }));
        if (json) printJson(context, keys);
        else for (const key of keys) out.write(`${key.kid}  ${key.alg}  ${key.status}  ${key.created_at}\n`);
        return;
      }
      case 'revoke': {
        const kid = positionals[0];
        if (kid === undefined) throw new UsageError('keys revoke needs a KID (see gatehouse keys list)');
        const revoked = await engine.signingKeys.revoke(kid, CLI_AUDIT);
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
