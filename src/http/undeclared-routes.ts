import type { FastifyInstance } from 'fastify';
import {
  endpoints,
  isOn,
  limitDecision,
  wellKnownTablePath,
  type EndpointSettings,
} from '../config/endpoints.js';

/** A route as Fastify registered it: one method, the full URL (base path included). */
export interface ServedRoute {
  method: string;
  url: string;
}

/**
 * The path a route has in the endpoint table: its URL without the base path (`/` for the base path); a
 * well-known endpoint's route is at the origin's root, the base path after its prefix (decision 47).
 */
function tablePath(url: string, basePath: string): string | undefined {
  const wellKnown = wellKnownTablePath(url, basePath);
  if (wellKnown !== undefined) return wellKnown;
  if (!url.startsWith(basePath)) return undefined;
  const rest = url.slice(basePath.length);
  // Under the base path, a well-known endpoint's path is not where it belongs.
  const misplaced =
    basePath !== '' &&
    endpoints().some((endpoint) => endpoint.wellKnown !== undefined && endpoint.path === rest);
  if (misplaced) return undefined;
  return rest === '' ? '/' : rest.startsWith('/') ? rest : undefined;
}

/**
 * What is wrong between the routes served and the endpoint table (endpoints.ts), one line each, none
 * when they agree: a route with no rate-limit decision (it would be silently unlimited), an endpoint
 * served although it is off, and a method the table declares that nothing serves.
 */
export function routeProblems(
  served: readonly ServedRoute[],
  options: { basePath: string; settings: EndpointSettings },
): string[] {
  const problems: string[] = [];
  const servedKeys = new Set<string>();
  for (const { method, url } of served) {
    const path = tablePath(url, options.basePath);
    if (path !== undefined) servedKeys.add(`${method} ${path}`);
    if (path === undefined || limitDecision(method, path) === undefined) {
      problems.push(
        `${method} ${url} has no rate-limit decision: declare it in src/config/endpoints.ts (a bucket, its own limit, or unlimited and why)`,
      );
    }
  }
  for (const endpoint of endpoints()) {
    if (endpoint.subtree === true) continue;
    const on = isOn(endpoint, options.settings);
    for (const method of Object.keys(endpoint.methods)) {
      const isServed = servedKeys.has(`${method} ${endpoint.path}`);
      if (on && !isServed) {
        problems.push(`${method} ${endpoint.path} is declared in src/config/endpoints.ts but not served`);
      } else if (!on && isServed) {
        problems.push(`${method} ${endpoint.path} is served although it is off with these settings`);
      }
    }
  }
  return problems;
}

/**
 * Refuses to start (ready() rejects) while a route of `app` is missing from the endpoint table or
 * disagrees with it (docs/decisions.md, decision 31). Installed before any route, so it sees each one,
 * whichever plugin registers it.
 */
export function refuseUndeclaredRoutes(
  app: FastifyInstance,
  options: { basePath: string; settings: EndpointSettings },
): void {
  const served: ServedRoute[] = [];
  app.addHook('onRoute', function recordRoute(route) {
    for (const method of [route.method].flat()) served.push({ method, url: route.url });
  });
  app.addHook('onReady', async function checkRoutes() {
    const problems = routeProblems(served, options);
    if (problems.length > 0) {
      throw new Error(`the routes disagree with the endpoint table:\n  ${problems.join('\n  ')}`);
    }
  });
}
