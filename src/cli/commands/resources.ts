import { CLI_AUDIT } from '../../core/audit/audit-log.js';
import { viewResource, type ResourceView } from '../../core/scopes/resource-registry.js';
import { UsageError, isHelpFlag, parseCommandArgs, type Options } from '../args.js';
import { printJson, type Cli } from '../context.js';
import { RESOURCES_HELP } from '../help.js';

function describe(view: ResourceView): string {
  return (
    [
      `uri:     ${view.uri}`,
      `name:    ${view.name ?? '-'}`,
      `scopes:  ${view.scopes.join(' ') || '(any)'}`,
    ].join('\n') + '\n'
  );
}

/** Each action's own options and how many arguments it takes. */
const ACTIONS: Record<string, { options: Options; positionals: number }> = {
  create: {
    options: { uri: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' } },
    positionals: 0,
  },
  list: { options: {}, positionals: 0 },
  delete: { options: {}, positionals: 1 },
};

/** `gatehouse resources`: the resource servers a `resource` parameter may name (RFC 8707). */
export async function runResourcesCommand(argv: string[], cli: Cli): Promise<void> {
  const [action, ...rest] = argv;
  if (action === undefined || isHelpFlag(action)) {
    cli.io.stdout.write(RESOURCES_HELP);
    if (action === undefined) {
      throw new UsageError(`resources needs an action: ${Object.keys(ACTIONS).join(', ')}`);
    }
    return;
  }
  const spec = ACTIONS[action];
  if (spec === undefined) throw new UsageError(`unknown resources action "${action}"`);
  const { values, positionals } = parseCommandArgs(
    rest,
    { uri: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' } },
    `resources ${action}`,
    spec.positionals,
  );
  // One parser for the types; options another action takes are refused here.
  for (const flag of Object.keys(values)) {
    if (!['data-dir', 'database-url', 'json', 'help'].includes(flag) && !(flag in spec.options)) {
      throw new UsageError(`resources ${action} has no option --${flag}`);
    }
  }
  if (values.help) {
    cli.io.stdout.write(RESOURCES_HELP);
    return;
  }
  const uri = positionals[0];
  if (spec.positionals === 1 && uri === undefined) throw new UsageError(`resources ${action} needs a URI`);
  await cli.withEngine(values, async (context) => {
    const { engine, json, out } = context;
    switch (action) {
      case 'create': {
        if (values.uri === undefined) throw new UsageError('resources create needs --uri');
        const resource = await engine.resources.create(
          {
            uri: values.uri,
            name: values.name,
            scopes: values.scopes?.split(/\s+/).filter(Boolean),
          },
          CLI_AUDIT,
        );
        const view = viewResource(resource);
        if (json) printJson(context, view);
        else out.write(describe(view));
        return;
      }
      case 'list': {
        const views = (await engine.resources.list()).map(viewResource);
        if (json) printJson(context, views);
        else {
          for (const view of views) {
            out.write(
              `${view.uri}  ${view.scopes.join(' ') || '(any scope)'}${view.name ? `  ${view.name}` : ''}\n`,
            );
          }
          if (views.length === 0) out.write('No resources.\n');
        }
        return;
      }
      case 'delete': {
        const resource = await engine.resources.require(uri as string);
        await engine.resources.delete(resource.uri, CLI_AUDIT);
        if (json) printJson(context, { deleted: resource.uri });
        else out.write(`Deleted resource ${resource.uri}.\n`);
        return;
      }
    }
  });
}
