import type { FastifyReply, FastifyRequest } from 'fastify';
import { open, seal } from '../../../core/keys/sealed-box.js';
import type { UpstreamAuthorization } from '../../../core/federation/upstream.js';
import { sha256 } from '../../../shared/crypto.js';

/**
 * What the upstream flow's callback must match, kept by the browser that started it (decision 40):
 * the provider, `state`, `nonce` and PKCE verifier (RFC 7636 §4.1), where the person goes next, and
 * why the flow was started. It travels in one cookie, sealed (AES-256-GCM under a key derived from the
 * server secret): any process can open it, nobody can read the verifier out of it or make one, and
 * its associated data is the browser id's hash, so a copy opens in no other browser. `__Host-` keeps
 * other hosts from planting it; SameSite=Lax still sends it on the upstream's top-level redirect back.
 * The callback clears it, and marks its `state` used in the shared store (Federation.spendState), so
 * a replayed callback fails in every process.
 */
export const UPSTREAM_STATE_COOKIE = '__Host-gatehouse-upstream';
/** How long the person has at the upstream before the callback is refused as expired. */
export const UPSTREAM_STATE_SECONDS = 10 * 60;

const OPTIONS = { path: '/', secure: true, httpOnly: true, sameSite: 'lax' } as const;

/**
 * Why the flow was started: a sign-in; linking an upstream account to the signed-in user (the
 * security page's "Link NAME"); or the signed-in user proving who they are again (`reauth=1`).
 */
export type UpstreamPurpose = 'sign-in' | 'link' | 'reauth';

export interface UpstreamState extends Omit<UpstreamAuthorization, 'url'> {
  providerId: string;
  next: string;
  purpose: UpstreamPurpose;
  /** For `link` and `reauth`: the signed-in user who started it (the callback must find the same). */
  userId?: string;
  expiresAt: number;
}

interface Stored {
  p: string;
  s: string;
  n: string | null;
  v: string;
  x: string;
  u: UpstreamPurpose;
  i?: string;
  /** The max_age sent upstream, which the ID token's auth_time is checked against. */
  m?: number;
  e: number;
}

const context = (browserId: string) => `upstream-state:${sha256(browserId)}`;

export function setUpstreamState(
  reply: FastifyReply,
  key: Buffer,
  browserId: string,
  state: UpstreamState,
): void {
  const stored: Stored = {
    p: state.providerId,
    s: state.state,
    n: state.nonce,
    v: state.codeVerifier,
    x: state.next,
    u: state.purpose,
    ...(state.userId !== undefined ? { i: state.userId } : {}),
    ...(state.maxAge !== undefined ? { m: state.maxAge } : {}),
    e: state.expiresAt,
  };
  reply.setCookie(UPSTREAM_STATE_COOKIE, seal(key, Buffer.from(JSON.stringify(stored)), context(browserId)), {
    ...OPTIONS,
    maxAge: UPSTREAM_STATE_SECONDS,
  });
}

/**
 * The upstream flow this browser started, if its cookie opens (sealed for this browser id) and has
 * not expired at `now`; undefined otherwise.
 */
export function upstreamState(
  request: FastifyRequest,
  key: Buffer,
  browserId: string | undefined,
  now: number,
): UpstreamState | undefined {
  const raw = request.cookies[UPSTREAM_STATE_COOKIE];
  if (raw === undefined || browserId === undefined || raw.length > 4096) return undefined;
  let stored: Stored;
  try {
    stored = JSON.parse(open(key, raw, context(browserId)).toString()) as Stored;
  } catch {
    return undefined;
  }
  if (typeof stored.e !== 'number' || stored.e < now) return undefined;
  return {
    providerId: stored.p,
    state: stored.s,
    nonce: stored.n,
    codeVerifier: stored.v,
    next: stored.x,
    purpose: stored.u,
    ...(stored.i !== undefined ? { userId: stored.i } : {}),
    ...(typeof stored.m === 'number' ? { maxAge: stored.m } : {}),
    expiresAt: stored.e,
  };
}

export function clearUpstreamState(reply: FastifyReply): void {
  reply.clearCookie(UPSTREAM_STATE_COOKIE, OPTIONS);
}
