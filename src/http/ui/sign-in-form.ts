import { documentHost } from '../../core/clients/metadata-documents.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthorizationRequest } from '../../core/authorize/request.js';
import type { IdentityProvider, User } from '../../core/model.js';
import type { BrowserContext } from './browser-context.js';
import { allowFormTarget, allowImageSource } from './content-security-policy.js';
import { pendingLink } from './federation/pending-link.js';
import { signInPage, type ProviderButton, type SignInPageInput } from './pages/sign-in-page.js';
import { frameFor, pendingAuthorization, sendPage, type UiContext } from './ui-context.js';

/**
 * The providers a sign-in offers (decision 40): every one, or those a client chose (its
 * `identityProviders`, in the order the store lists them); `null` is no choice made (every one).
 */
export function offeredProviders<P extends Pick<IdentityProvider, 'id'>>(
  all: readonly P[],
  allowed: readonly string[] | null,
): P[] {
  // A client's choice is shown in its own order (decision 39); every provider, in name order, otherwise.
  if (allowed === null) return [...all];
  return allowed.flatMap((id) => all.filter((provider) => provider.id === id));
}

/** What a sign-in page is rendered with, beyond what sendSignInPage finds itself. */
export type SignInFormInput = Omit<
  SignInPageInput,
  'providers' | 'pendingLink' | 'clientName' | 'clientHost'
> & {
  /**
   * The authorization request the sign-in is for, when the caller has it validated already; else the
   * one `next` names is looked up (pendingAuthorization).
   */
  authorization?: AuthorizationRequest;
  /** With `reauth`: the signed-in user, whose passkeys and linked providers confirm it too. */
  reauthOf?: User;
};

/**
 * The sign-in page, from every route that shows it (the form, a wrong password, a refused passkey,
 * /authorize): the application it is for (whose redirect URI its form may then reach), the upstream
 * providers offered ("Continue with NAME", their logos allowed by the page's policy), and the
 * upstream account waiting to be linked, if any (decision 40).
 */
export async function sendSignInPage(
  ui: UiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  browser: BrowserContext,
  input: SignInFormInput,
): Promise<FastifyReply> {
  const { authorization: given, reauthOf, ...page } = input;
  const reauth = page.reauth === true && reauthOf !== undefined;
  const authorization = reauth ? undefined : (given ?? (await pendingAuthorization(ui, page.next)));
  if (authorization !== undefined) allowFormTarget(reply, authorization.redirectUri);
  const all = await ui.engine.federation.providers();
  let providers: readonly IdentityProvider[];
  if (reauth) {
    // Decision 40: an upstream account linked to the signed-in user confirms it is them (reauth=1).
    const linked = new Set((await ui.engine.federation.links(reauthOf.id)).map((link) => link.providerId));
    providers = all.filter((provider) => linked.has(provider.id));
  } else {
    // Decision 39: the providers the client chose to offer (all of them unless it chose).
    providers = offeredProviders(all, authorization?.client.identityProviders ?? null);
  }
  for (const provider of providers) if (provider.logoUri !== null) allowImageSource(reply, provider.logoUri);
  const pending = reauth ? undefined : pendingLink(ui, request);
  const pendingProvider = pending && all.find((provider) => provider.id === pending.providerId);
  const buttons: ProviderButton[] = providers.map(({ id, name, logoUri }) => ({ id, name, logoUri }));
  return sendPage(
    reply,
    status,
    signInPage(reauth ? frameFor(ui, browser) : frameFor(ui), {
      ...page,
      ...(authorization !== undefined
        ? { clientName: authorization.client.name, clientHost: documentHost(authorization.client) }
        : {}),
      ...(reauth ? { reauthPasskey: (await ui.engine.passkeys.list(reauthOf.id)).length > 0 } : {}),
      providers: buttons,
      ...(pending !== undefined && pendingProvider !== undefined
        ? {
            pendingLink: {
              providerName: pendingProvider.name,
              label: pending.label,
              reason: pending.reason,
            },
          }
        : {}),
    }),
  );
}
