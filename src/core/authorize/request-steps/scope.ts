import { OAuthError } from '../../errors.js';
import { OFFLINE_ACCESS_SCOPE, UNSERVED_STANDARD_SCOPES } from '../../scopes/claims.js';
import { resolveScopeForResources, urisOf } from '../../scopes/resources.js';
import { parseScope } from '../../scopes/scopes.js';
import { responseParts } from '../response.js';
import { promptValues, responseTypeOf, single, type RequestDraft, type StepError } from './draft.js';

/**
 * The scope: only scopes the client was registered with (RFC 6749 §3.3). Core §11: offline_access is
 * ignored unless the response type returns a code and consent is asked: by prompt=consent, or by the
 * consent page itself, which lists it for the user to allow or untick (docs/decisions.md, decision
 * 17). Without prompt=consent it is kept only where it can be honoured (the client may have the scope
 * and the refresh_token grant) and a page can be shown (not prompt=none); elsewhere it is ignored, as
 * before, rather than refused. Core §3.1.2.1: the standard scope values for claims Gatehouse does not
 * keep are ignored, not refused.
 *
 * The resources (RFC 8707 §2): each registered, each requested scope offered by one of them, and the
 * default scope what they offer; invalid_target otherwise.
 */
export async function resolveScopeAndResources(draft: RequestDraft): Promise<StepError | undefined> {
  const { client, openid, params, policy } = draft;
  const parts = responseParts(responseTypeOf(draft));
  const prompt = promptValues(draft);
  const offlineAllowed =
    client.scopes.includes(OFFLINE_ACCESS_SCOPE) && client.grantTypes.includes('refresh_token');
  const keepOffline =
    !openid || (parts.code && (prompt.includes('consent') || (offlineAllowed && !prompt.includes('none'))));
  const ignored = (name: string) =>
    (name === OFFLINE_ACCESS_SCOPE && !keepOffline) ||
    (openid && UNSERVED_STANDARD_SCOPES.includes(name) && !client.scopes.includes(name));
  const withoutIgnored = (names: string[]) => names.filter((name) => !ignored(name));
  try {
    const requested = parseScope(single(params, 'scope').value);
    const values = params.getAll('resource');
    if (policy.resources === undefined && values.some((value) => value !== '')) {
      return { error: 'invalid_target', description: 'no resource server is registered here' };
    }
    const targets = policy.resources === undefined ? [] : await policy.resources.resolve(values);
    draft.scope = {
      scope: withoutIgnored(
        resolveScopeForResources(
          requested === undefined ? undefined : withoutIgnored(requested),
          client.scopes,
          targets,
        ),
      ),
      resources: urisOf(targets),
      resourceNames: targets.map(({ uri, name }) => ({ uri, name })),
    };
    return undefined;
  } catch (error) {
    if (error instanceof OAuthError) return { error: error.code, description: error.description };
    throw error;
  }
}
