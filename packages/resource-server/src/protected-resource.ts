/**
 * RFC 9728 OAuth 2.0 Protected Resource Metadata, framework-free: the document a resource server
 * publishes so that a client holding only the resource's URL (an MCP client, say) can find the
 * authorization servers that issue tokens for it, and where that document lives.
 */

import { canonicalResource, hasSpaceOrControl, isLoopbackHost } from './uri-syntax.js';

// The resource identifier's canonical form is the server's (it makes tokens' `aud`): one copy.
export { canonicalResource };

/** The ways RFC 6750 §2 lets a client present a bearer token (RFC 9728 §2, `bearer_methods_supported`). */
export type BearerMethod = 'header' | 'body' | 'query';

/** What the resource server says about itself, besides its identifier. */
export interface ProtectedResourceMetadataOptions {
  /**
   * The resource identifier (RFC 9728 §1.2): an `https` URL without a fragment or query, e.g.
   * `https://mcp.example.com/mcp` (plain `http` only on a loopback host, for development). Clients
   * ask the authorization server for tokens addressed to it (RFC 8707 `resource`). It is used in its
   * canonical form (see canonicalResource).
   */
  resource: string;
  /** `authorization_servers`: the issuer identifiers that issue tokens for this resource. */
  authorizationServers: readonly string[];
  /** `scopes_supported`: the scopes a client may need for this resource. */
  scopesSupported?: readonly string[];
  /** `bearer_methods_supported`. */
  bearerMethodsSupported: readonly BearerMethod[];
  /** `resource_name`: a human-readable name, for the end user. */
  resourceName?: string;
  /** `resource_documentation`: a page for developers. */
  resourceDocumentation?: string;
  /** `resource_policy_uri`: how the resource uses data. */
  resourcePolicyUri?: string;
  /** `resource_tos_uri`: the resource's terms of service. */
  resourceTosUri?: string;
}

/** The RFC 9728 §2 members this library publishes. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  bearer_methods_supported: BearerMethod[];
  resource_name?: string;
  resource_documentation?: string;
  resource_policy_uri?: string;
  resource_tos_uri?: string;
}

/** RFC 9728 §3: the well-known URI suffix registered for this metadata. */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

const BEARER_METHODS: ReadonlySet<string> = new Set(['header', 'body', 'query']);

/**
 * The resource's metadata document and the URLs it is served at, checked once, when the resource
 * server is built: a malformed resource fails at start-up, not on the first request.
 */
export class ProtectedResource {
  /** Where the document lives (RFC 9728 §3.1): what challenges name as `resource_metadata`. */
  readonly metadataUrl: string;
  /**
   * The paths an adapter serves the document at: the §3.1 path-inserted form, and for a resource with
   * a path also the bare well-known path, which clients that know only the origin try.
   */
  readonly metadataPaths: readonly string[];
  private readonly document: ProtectedResourceMetadata;

  constructor(options: ProtectedResourceMetadataOptions) {
    const url = checkedResourceUrl(options.resource);
    const resource = canonicalResource(url);
    // RFC 9728 §3.1: the well-known suffix goes between the host and the path; a path of just "/"
    // (the terminating slash after the host) is dropped first.
    const path = url.pathname === '/' ? '' : url.pathname;
    this.metadataUrl = `${url.origin}${PROTECTED_RESOURCE_WELL_KNOWN}${path}`;
    this.metadataPaths =
      path === ''
        ? [PROTECTED_RESOURCE_WELL_KNOWN]
        : [`${PROTECTED_RESOURCE_WELL_KNOWN}${path}`, PROTECTED_RESOURCE_WELL_KNOWN];
    if (options.authorizationServers.length === 0) {
      throw new Error('authorizationServers must name at least one issuer');
    }
    for (const issuer of options.authorizationServers) checkedHttpUrl(issuer, 'authorizationServers');
    const methods = [...new Set(options.bearerMethodsSupported)];
    const unknown = methods.filter((method) => !BEARER_METHODS.has(method));
    if (unknown.length > 0) {
      throw new Error(`bearerMethodsSupported takes header, body and query; not ${unknown.join(', ')}`);
    }
    for (const [name, value] of [
      ['resourceDocumentation', options.resourceDocumentation],
      ['resourcePolicyUri', options.resourcePolicyUri],
      ['resourceTosUri', options.resourceTosUri],
    ] as const) {
      if (value !== undefined) checkedHttpUrl(value, name);
    }
    this.document = {
      // RFC 9728 §3.3: exactly the identifier the metadata URL was built from.
      resource,
      authorization_servers: [...options.authorizationServers],
      ...(options.scopesSupported === undefined ? {} : { scopes_supported: [...options.scopesSupported] }),
      bearer_methods_supported: methods,
      ...(options.resourceName === undefined ? {} : { resource_name: options.resourceName }),
      ...(options.resourceDocumentation === undefined
        ? {}
        : { resource_documentation: options.resourceDocumentation }),
      ...(options.resourcePolicyUri === undefined ? {} : { resource_policy_uri: options.resourcePolicyUri }),
      ...(options.resourceTosUri === undefined ? {} : { resource_tos_uri: options.resourceTosUri }),
      // Not published: resource_signing_alg_values_supported (RFC 9728 §2) is for a resource that signs
      // its responses, which this library does not do; jwks_uri likewise.
    };
  }

  /** The resource identifier in canonical form: what the metadata says and tokens' `aud` must name. */
  get resource(): string {
    return this.document.resource;
  }

  /** A fresh copy of the document, to serve as `application/json`. */
  metadata(): ProtectedResourceMetadata {
    return structuredClone(this.document);
  }
}

/** The resource identifier's rules: RFC 9728 §1.2 and RFC 8707 §2. */
function checkedResourceUrl(resource: string): URL {
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    throw new Error(`resource must be an absolute URL, not ${JSON.stringify(resource)}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    // RFC 9728 §1.2 asks for https; http is allowed on a loopback host only, as Gatehouse does for
    // redirect URIs, so that a development server can run without a certificate.
    throw new Error('resource must be an https URL (http only on a loopback host)');
  }
  // RFC 8707 §2: no fragment, and a query SHOULD NOT be there; refusing one keeps the metadata URL of
  // RFC 9728 §3.1 a plain path that an adapter can route.
  if (resource.includes('#')) throw new Error('resource must not have a fragment (RFC 8707 §2)');
  // A URL parser rewrites these silently; the identifier compared must be the one written.
  if (resource.includes('\\') || hasSpaceOrControl(resource)) {
    throw new Error('resource must not contain a backslash, spaces or control characters');
  }
  if (resource.includes('?')) throw new Error('resource must not have a query (RFC 8707 §2)');
  if (url.username !== '' || url.password !== '') throw new Error('resource must not carry credentials');
  return url;
}

function checkedHttpUrl(value: string, option: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new Error(`${option}: ${JSON.stringify(value)} is not an http(s) URL`);
  }
}
