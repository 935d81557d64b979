/**
 * The little of oidc-provider 9 the bench peer uses: the package ships no type declarations, and its
 * configuration object is checked by the provider itself at start-up.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    /** Koa's request handler for a node:http(s) server. */
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  }
}
