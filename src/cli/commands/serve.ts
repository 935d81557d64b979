import cluster from 'node:cluster';
import { createGatehouse, listenUrl } from '../../compose/gatehouse.js';
import { integerFlag, parseCommandArgs } from '../args.js';
import { COMMANDS, GLOBAL_FLAGS } from '../command-table.js';
import { cliConfig, settingsFromFlags, type Cli } from '../context.js';
import { SERVE_HELP } from '../help.js';

/**
 * The human start line: where the server listens and the issuer it names itself by, which differ
 * behind a proxy or under another host name. It goes to standard error: standard output carries the
 * JSON log lines alone, one format per stream, so a log collector reading stdout never meets it
 * (docs/deployment.md, "Logs").
 */
export function startLine(options: {
  url: string;
  issuer: string;
  workers: number;
  certPath: string | undefined;
}): string {
  const who = options.workers > 1 ? `Gatehouse (${options.workers} workers)` : 'Gatehouse';
  const certNote = options.certPath !== undefined ? `; TLS certificate: ${options.certPath}` : '';
  return `${who} listening on ${options.url} (issuer ${options.issuer})${certNote}\n`;
}

/**
 * `gatehouse serve`: one process, or a primary that forks --workers N and serves nothing itself. Once
 * it listens it owns the process: its signal handlers stop the server and end the process. It is the
 * one command that resolves to -1 (keeps running) and is never run inside another program.
 */
export async function runServeCommand(argv: string[], cli: Cli): Promise<number> {
  const { values } = parseCommandArgs(argv, COMMANDS.serve.flags, 'serve', 0);
  if (values.help) {
    cli.io.stdout.write(SERVE_HELP);
    return 0;
  }
  const settings = settingsFromFlags(values, { ...GLOBAL_FLAGS, ...COMMANDS.serve.flags });
  const workers = integerFlag(values.workers, '--workers', 1, 256) ?? 1;
  const config = await cliConfig(cli, settings, true);
  if (workers > 1 && cluster.isPrimary) {
    // Migrations, the first signing key and the dev certificate are made once, before the fork.
    const gatehouse = await createGatehouse(config);
    const tls = gatehouse.tls;
    await gatehouse.close();
    const { serveClusterMetrics } = await import('../../compose/cluster-metrics.js');
    serveClusterMetrics();
    // The line is printed once every worker listens, with the port they were given: the address
    // is the workers' (--host), never the primary's guess.
    let listening = 0;
    const onListening = (_worker: unknown, address: { port: number }) => {
      if (++listening < workers) return;
      cluster.off('listening', onListening);
      cli.io.stderr.write(
        startLine({
          url: listenUrl(config, tls !== undefined, address.port),
          issuer: config.issuer,
          workers,
          certPath: tls?.certPath,
        }),
      );
    };
    cluster.on('listening', onListening);
    for (let i = 0; i < workers; i++) cluster.fork();
    const stop = () => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return -1;
  }
  const gatehouse = await createGatehouse(config, { processMetrics: true });
  const url = await gatehouse.listen();
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    gatehouse.app.log.info({ signal }, 'shutting down: finishing requests in flight');
    // A bounded drain: whatever is still open after 10 s is cut.
    const timer = setTimeout(() => process.exit(1), 10_000);
    timer.unref();
    gatehouse.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  // Printed once a signal would be handled: whoever waits for the line may stop the server at once.
  if (cluster.isPrimary) {
    cli.io.stderr.write(
      startLine({ url, issuer: config.issuer, workers: 1, certPath: gatehouse.tls?.certPath }),
    );
  }
  return -1;
}
