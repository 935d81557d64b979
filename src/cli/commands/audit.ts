import { MAX_AUDIT_PAGE, viewAuditEvent, type AuditEventView } from '../../core/audit/audit-log.js';
import { ValidationError } from '../../core/validation.js';
import { UsageError, isHelpFlag, parseCommandArgs } from '../args.js';
import { printJson, type Cli } from '../context.js';
import { COMMANDS } from '../command-table.js';
import { AUDIT_HELP } from '../help.js';

/** RFC 3339, as /v1/audit-events takes it. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/;

function epochSeconds(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const millis = RFC3339.test(value) ? Date.parse(value.toUpperCase()) : Number.NaN;
  if (Number.isNaN(millis))
    throw new UsageError(`--${flag} must be an RFC 3339 time, e.g. 2026-01-31T12:00:00Z`);
  return Math.floor(millis / 1000);
}

/** One event on one line: when, what, who, about whom, from where, and the note. */
export function auditLine(event: AuditEventView): string {
  const actor =
    event.actor === null
      ? '-'
      : event.actor.id === null
        ? event.actor.type
        : `${event.actor.type}:${event.actor.id}`;
  const about = [
    event.user_id === null ? undefined : `user ${event.user_id}`,
    event.client_id === null ? undefined : `client ${event.client_id}`,
  ].filter((part) => part !== undefined);
  return [
    event.at,
    event.type,
    `by ${actor}`,
    ...about,
    ...(event.address === null ? [] : [`from ${event.address}`]),
    ...(event.detail === null ? [] : [`(${event.detail})`]),
  ].join('  ');
}

export async function runAuditCommand(argv: string[], cli: Cli): Promise<void> {
  const [action, ...rest] = argv;
  if (action === undefined || isHelpFlag(action)) {
    cli.io.stdout.write(AUDIT_HELP);
    if (action === undefined) throw new UsageError('audit needs an action: list');
    return;
  }
  if (action !== 'list') throw new UsageError(`unknown audit action "${action}"`);
  const { values } = parseCommandArgs(rest, COMMANDS.audit.actions.list.flags, 'audit list', 0);
  if (values.help) {
    cli.io.stdout.write(AUDIT_HELP);
    return;
  }
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_PAGE) {
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_AUDIT_PAGE}`);
  }
  const types = (values.type ?? [])
    .flatMap((part) => part.split(','))
    .map((type) => type.trim())
    .filter((type) => type !== '');
  const since = epochSeconds('since', values.since);
  const until = epochSeconds('until', values.until);
  await cli.withEngine(values, async (context) => {
    const { engine, json, out } = context;
    let page;
    try {
      page = await engine.audit.list({
        types,
        userId: values.user,
        clientId: values.client,
        since,
        until,
        cursor: values.cursor,
        limit,
      });
    } catch (error) {
      // A malformed --type or --cursor: the command line's mistake, said as a usage error.
      if (error instanceof ValidationError)
        throw new UsageError(`--${error.field}: ${error.message.replace(/^\w+: /, '')}`);
      throw error;
    }
    const items = page.items.map(viewAuditEvent);
    if (json) {
      printJson(context, { items, next_cursor: page.nextCursor ?? null });
      return;
    }
    for (const item of items) out.write(auditLine(item) + '\n');
    if (items.length === 0) out.write('No audit events.\n');
    if (page.nextCursor !== undefined) out.write(`More: --cursor ${page.nextCursor}\n`);
  });
}
