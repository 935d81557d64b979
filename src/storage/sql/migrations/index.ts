import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001-initial.js';
import * as browserSessions from './0002-browser-sessions.js';
import * as purgeIndexes from './0003-purge-indexes.js';
import * as macNonces from './0004-mac-nonces.js';
import * as signingKeyRevocation from './0005-signing-key-revocation.js';
import * as serverSecretCheck from './0006-server-secret-check.js';
import * as openIdConnect from './0007-openid-connect.js';
import * as resourceIndicators from './0008-resource-indicators.js';
import * as privateKeyJwt from './0009-private-key-jwt.js';
import * as dynamicRegistration from './0010-dynamic-registration.js';
import * as pushedAuthorizationRequests from './0011-pushed-authorization-requests.js';
import * as dpop from './0012-dpop.js';
import * as deviceAuthorization from './0013-device-authorization.js';
import * as registrationScopes from './0014-registration-scopes.js';
import * as administrators from './0015-administrators.js';
import * as sessionAuthentications from './0016-session-authentications.js';
import * as passkeys from './0017-passkeys.js';
import * as identityProviders from './0022-identity-providers.js';
import * as secondFactors from './0018-second-factors.js';
import * as mailLinks from './0019-mail-links.js';
import * as accountSecurity from './0020-account-security.js';
import * as tokenAssurance from './0021-token-assurance.js';
import * as clientIdentityProviders from './0023-client-identity-providers.js';
import * as auditEvents from './0024-audit-events.js';
import * as metricSamples from './0025-metric-samples.js';
import * as clientMetadataDocuments from './0026-client-metadata-documents.js';

/** Every migration, in order. Names sort lexically, which is the order Kysely applies them in. */
const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-browser-sessions': browserSessions,
  '0003-purge-indexes': purgeIndexes,
  '0004-mac-nonces': macNonces,
  '0005-signing-key-revocation': signingKeyRevocation,
  '0006-server-secret-check': serverSecretCheck,
  '0007-openid-connect': openIdConnect,
  '0008-resource-indicators': resourceIndicators,
  '0009-private-key-jwt': privateKeyJwt,
  '0010-dynamic-registration': dynamicRegistration,
  '0011-pushed-authorization-requests': pushedAuthorizationRequests,
  '0012-dpop': dpop,
  '0013-device-authorization': deviceAuthorization,
  '0014-registration-scopes': registrationScopes,
  '0015-administrators': administrators,
  '0016-session-authentications': sessionAuthentications,
  '0017-passkeys': passkeys,
  '0018-second-factors': secondFactors,
  '0019-mail-links': mailLinks,
  '0020-account-security': accountSecurity,
  '0021-token-assurance': tokenAssurance,
  '0022-identity-providers': identityProviders,
  '0023-client-identity-providers': clientIdentityProviders,
  '0024-audit-events': auditEvents,
  '0025-metric-samples': metricSamples,
  '0026-client-metadata-documents': clientMetadataDocuments,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
