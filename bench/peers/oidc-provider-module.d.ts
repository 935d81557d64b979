/**
 * The little of oidc-provider 9 the bench peer and the tests' upstream provider
 * (test/helpers/upstream-providers.ts) use: the package ships no type declarations, and its
 * configuration object is checked by the provider itself at start-up.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  /** What Provider#interactionDetails answers about the interaction a request belongs to. */
  export interface InteractionDetails {
    uid: string;
    prompt: { name: string; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId?: string };
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    /** Koa's request handler for a node:http(s) server. */
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    /** Ends the interaction with `result` and redirects the browser on (303). */
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
}
