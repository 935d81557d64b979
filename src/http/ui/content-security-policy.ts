import type { FastifyReply } from 'fastify';

// Sources a page's forms may submit to beyond our own origin. Per reply, because a form whose answer
// redirects to the client (consent, sign-in that resumes an authorization) must name the client's
// origin: Chromium applies form-action to every redirect that follows a form submission.
const formTargets = new WeakMap<FastifyReply, Set<string>>();

/** The CSP source expression that matches a redirect URI: its origin, or its private-use scheme. */
export function sourceFor(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol === 'https:' || url.protocol === 'http:') return url.origin;
  // A private-use scheme of a native app (RFC 8252 §7.1), already vetted at registration.
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? url.protocol : undefined;
}

// Image sources beyond our own and the product logo's, per reply: the logos of the upstream identity
// providers a sign-in page offers (decision 40), each an operator's https URL.
const imageSources = new WeakMap<FastifyReply, Set<string>>();

/** Lets this reply's page show an image from `uri`'s origin (an https URL; anything else is ignored). */
export function allowImageSource(reply: FastifyReply, uri: string): void {
  if (!/^https:\/\//.test(uri)) return;
  const source = sourceFor(uri);
  if (source === undefined) return;
  const set = imageSources.get(reply) ?? new Set<string>();
  set.add(source);
  imageSources.set(reply, set);
}

export function allowFormTarget(reply: FastifyReply, redirectUri: string): void {
  const source = sourceFor(redirectUri);
  if (source === undefined) return;
  const set = formTargets.get(reply) ?? new Set<string>();
  set.add(source);
  formTargets.set(reply, set);
}

/**
 * A strict policy: scripts and styles only from our own origin (no inline script at all), nothing may
 * frame the pages (clickjacking on the consent page), no <base> rewriting, forms only to us and the
 * redirect target the page is about.
 */
export function contentSecurityPolicy(reply: FastifyReply, logoUrl: string | undefined): string {
  const targets = formTargets.get(reply);
  const images = imageSources.get(reply);
  if (images !== undefined) return buildPolicy(logoUrl, [...(targets ?? [])], [...images]);
  if (targets === undefined) {
    // Every page without a form to a client (and every redirect) gets the same policy: build it once.
    let policy = policyWithoutTargets.get(logoUrl);
    if (policy === undefined) {
      policy = buildPolicy(logoUrl, []);
      policyWithoutTargets.set(logoUrl, policy);
    }
    return policy;
  }
  return buildPolicy(logoUrl, [...targets]);
}

const policyWithoutTargets = new Map<string | undefined, string>();

function buildPolicy(
  logoUrl: string | undefined,
  formTargetSources: string[],
  imageSourcesOfPage: string[] = [],
): string {
  const images = ["'self'", 'data:'];
  const logo = logoUrl && /^https?:\/\//.test(logoUrl) ? sourceFor(logoUrl) : undefined;
  if (logo !== undefined) images.push(logo);
  for (const source of imageSourcesOfPage) if (!images.includes(source)) images.push(source);
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${images.join(' ')}`,
    "connect-src 'self'",
    `form-action 'self'${formTargetSources.map((s) => ` ${s}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}
