// The URI syntax and canonical form shared with the resource-server library (decision 26).
import {
  canonicalResource,
  httpUriProblem,
  MAX_URI_LENGTH,
  parseStoredUri,
} from 'gatehouse-oauth-resource-server/uri-syntax';
import { invalidTarget } from '../errors.js';
import type { ResourceServer } from '../model.js';
import { OFFLINE_ACCESS_SCOPE, OPENID_SCOPE } from './claims.js';
import type { ResourceStore } from '../ports.js';
import { resolveScope } from './scopes.js';

/**
 * RFC 8707 resource indicators: every rule about the `resource` parameter lives here, for the
 * authorization endpoint, every grant at the token endpoint, and the resource registry.
 */

export const MAX_RESOURCE_URI_LENGTH = MAX_URI_LENGTH;
/** More resources than this in one request is refused: each is a look-up, and an `aud` entry. */
export const MAX_RESOURCES_PER_REQUEST = 16;
/**
 * Scopes no resource server offers or needs to: `openid` asks for an ID token and `offline_access`
 * for a refresh token (OpenID Connect Core §3.1.2.1, §11), both the authorization server's own.
 */
const SCOPES_OF_THE_SERVER: readonly string[] = [OPENID_SCOPE, OFFLINE_ACCESS_SCOPE];

export type CanonicalResourceUri =
  { uri: string; problem?: undefined } | { uri?: undefined; problem: string };

/**
 * The canonical form of a resource server's URI, or why it cannot be one. RFC 8707 §2: an absolute
 * URI, a query allowed, no fragment; Gatehouse also asks what it asks of redirect URIs: https, or http
 * on a loopback host only, no user information, no backslash, spaces or control characters (which a
 * URL parser silently rewrites, so the checked string would not be the one compared).
 *
 * The form is the WHATWG URL serialisation (lower-case scheme and host, default port dropped, the
 * path's dot segments resolved and its characters percent-encoded), less the "/" it adds to a bare
 * origin: `https://api.example/` and `https://api.example` name one resource (RFC 3986 §6.2.3), and a
 * resource server most often calls itself by the second, which is what its tokens' `aud` then says.
 */
export function canonicalResourceUri(value: string): CanonicalResourceUri {
  const { url, problem } = parseStoredUri(value);
  if (url === undefined) return { problem };
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { problem: 'must use https (http only on loopback hosts)' };
  }
  const httpProblem = httpUriProblem(value, url);
  return httpProblem === undefined ? { uri: canonicalResource(url) } : { problem: httpProblem };
}

/**
 * The resources a request names: each `resource` value (RFC 8707 §2; repeatable) in canonical form,
 * each once, in the order given. One that is not an absolute URI, has a fragment, or could never be
 * registered (canonicalResourceUri) is `invalid_target`; whether each is registered is
 * ResourceTargets.lookUp's to say.
 */
export function parseResources(values: readonly string[]): string[] {
  const present = values.filter((value) => value !== '');
  if (present.length > MAX_RESOURCES_PER_REQUEST) {
    throw invalidTarget(`at most ${MAX_RESOURCES_PER_REQUEST} resources may be requested at once`);
  }
  const uris: string[] = [];
  for (const value of present) {
    const canonical = canonicalResourceUri(value);
    // The value itself is not echoed: only a canonical URI is sure to be sendable in an error.
    if (canonical.uri === undefined) throw invalidTarget(`a resource ${canonical.problem} (RFC 8707 §2)`);
    if (!uris.includes(canonical.uri)) uris.push(canonical.uri);
  }
  return uris;
}

/**
 * The `aud` of an access token for `resources` (RFC 8707 §2, RFC 9068 §3): the one resource as a
 * string, several as an array; none, the issuer, whose own API (/v1, /userinfo) is the resource then.
 */
export function audienceOf(resources: readonly string[], issuer: string): string | string[] {
  if (resources.length === 0) return issuer;
  if (resources.length === 1) return resources[0] as string;
  return [...resources];
}

/** The audiences of an `aud` claim, a string or an array of strings (RFC 7519 §4.1.3). */
export function audiencesOf(aud: string | readonly string[]): readonly string[] {
  return typeof aud === 'string' ? [aud] : aud;
}

function offeredBy(resources: readonly ResourceServer[], scope: string): boolean {
  return (
    SCOPES_OF_THE_SERVER.includes(scope) ||
    resources.some((resource) => resource.scopes.length === 0 || resource.scopes.includes(scope))
  );
}

/**
 * The scope of a token for `resources`. Without resources it is `requested`, or `fallback` (the
 * client's scopes, or the grant's) when none was requested, as ever. With resources, every requested
 * scope but `openid` and `offline_access` must be offered by at least one of them (a resource with
 * no scopes registered offers all), else `invalid_target`; with none requested, the fallback's scopes
 * that they offer, and `invalid_target` when they offer none of them. `requested` has already been
 * held to what the client may have (invalid_scope comes first).
 */
export function scopeForResources(
  requested: readonly string[] | undefined,
  fallback: readonly string[],
  resources: readonly ResourceServer[],
): string[] {
  if (resources.length === 0) return [...(requested ?? fallback)];
  if (requested !== undefined) {
    const outside = requested.filter((name) => !offeredBy(resources, name));
    if (outside.length > 0) {
      throw invalidTarget(`the requested resources do not offer the scope ${outside.join(' ')}`);
    }
    return [...requested];
  }
  const scope = fallback.filter((name) => offeredBy(resources, name));
  const ofResources = (names: readonly string[]) =>
    names.some((name) => !SCOPES_OF_THE_SERVER.includes(name));
  if (ofResources(fallback) && !ofResources(scope)) {
    throw invalidTarget('the requested resources offer none of the scopes this client may have');
  }
  return scope;
}

/**
 * The scope of a request that names `resources` and asks for `requested` (undefined or empty: the
 * default) out of `allowed`: resolveScope's rule first (invalid_scope for a scope the client may not
 * have), then scopeForResources'.
 */
export function resolveScopeForResources(
  requested: readonly string[] | undefined,
  allowed: readonly string[],
  resources: readonly ResourceServer[],
): string[] {
  const resolved = resolveScope(requested === undefined ? undefined : [...requested], allowed);
  const asked = requested === undefined || requested.length === 0 ? undefined : resolved;
  return scopeForResources(asked, allowed, resources);
}

/** The URIs of resources, as the tokens for them name them (`aud`) and grants keep them. */
export function urisOf(resources: readonly ResourceServer[]): string[] {
  return resources.map((resource) => resource.uri);
}

/**
 * The resources a token request gets out of those of its grant (RFC 8707 §2.2): those it names, each
 * one of the grant's, or all of the grant's when it names none. Never more: a resource the grant did
 * not name is `invalid_target`. A grant that named none was for the issuer (its tokens' `aud`), so the
 * issuer is the one resource such a request may name.
 */
export function narrowResources(
  requested: readonly string[],
  granted: readonly string[],
  issuer: string,
): string[] {
  if (requested.length === 0) return [...granted];
  const allowed = granted.length === 0 ? [issuer] : granted;
  const outside = requested.filter((uri) => !allowed.includes(uri));
  if (outside.length > 0) {
    throw invalidTarget(
      granted.length === 0
        ? 'the authorization named no resource, so no other can be asked for now'
        : `not a resource of the authorization: ${outside.join(' ')}`,
    );
  }
  // The issuer alone, for a grant that named none, is what no resource means.
  return granted.length === 0 ? [] : [...requested];
}

/**
 * The registered resources a request may name: Gatehouse's own API, at the issuer's URL, always (it
 * offers every scope), and those in the store. Each look-up reads the store once, so a resource an
 * operator deleted is refused from then on, also for grants made before.
 */
export class ResourceTargets {
  /** The canonical URIs that name the issuer's own API: the issuer's, and its other names. */
  private readonly ownNames: ReadonlySet<string>;

  constructor(
    private readonly store: Pick<ResourceStore, 'getMany'>,
    readonly issuer: string,
    /**
     * Other URIs of the issuer's own API, which stand for the issuer: /v1's RFC 9728 resource
     * identifier, `<issuer>/v1`, which a client that discovered /v1 names (decision 47). A request
     * naming one gets what naming the issuer gets: a token whose `aud` is the issuer.
     */
    ownApi: readonly string[] = [],
  ) {
    const names = [issuer, ...ownApi].flatMap((uri) => [uri, canonicalResourceUri(uri).uri ?? uri]);
    this.ownNames = new Set(names);
  }

  /** The issuer as a resource: its API takes any scope the client has. */
  private get self(): ResourceServer {
    return { uri: this.issuer, name: null, scopes: [], createdAt: 0 };
  }

  /** Whether `uri` (canonical) names the issuer, or its own API under another name. */
  isIssuer(uri: string): boolean {
    return this.ownNames.has(uri);
  }

  /**
   * The resources `uris` (canonical) name, in their order; `invalid_target` for one not registered.
   * The issuer stands for itself under the URI the issuer is configured with.
   */
  async lookUp(uris: readonly string[]): Promise<ResourceServer[]> {
    if (uris.length === 0) return [];
    const others = uris.filter((uri) => !this.isIssuer(uri));
    const found = others.length === 0 ? [] : await this.store.getMany(others);
    return uris.map((uri) => {
      if (this.isIssuer(uri)) return this.self;
      const resource = found.find((candidate) => candidate.uri === uri);
      if (resource === undefined) throw invalidTarget(`resource not registered here: ${uri}`);
      return resource;
    });
  }

  /** parseResources, then lookUp: the resources of a request's `resource` values. */
  async resolve(values: readonly string[]): Promise<ResourceServer[]> {
    return this.lookUp(this.parse(values));
  }

  /**
   * The resources of a token request under a grant that named `granted` (narrowResources), each
   * still registered: a resource deleted since is `invalid_target` (the request may leave it out).
   */
  async narrow(values: readonly string[], granted: readonly string[]): Promise<ResourceServer[]> {
    return this.lookUp(narrowResources(this.parse(values), granted, this.issuer));
  }

  /** parseResources, with the issuer under its configured URI. */
  parse(values: readonly string[]): string[] {
    return this.canonical(parseResources(values));
  }

  /** The issuer under its configured URI, however a request spelled it. */
  canonical(uris: readonly string[]): string[] {
    return [...new Set(uris.map((uri) => (this.isIssuer(uri) ? this.issuer : uri)))];
  }
}
