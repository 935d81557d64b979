export const MAIN_HELP = `gatehouse: OpenID Provider and OAuth 2.0 authorization server

Usage: gatehouse [options] <command> [options]

Commands:
  serve                      Start the HTTPS server (creates and migrates the store if needed)
  init                       Create a new store: schema, built-in scopes, first signing key
  migrate                    Apply pending database migrations
  check                      Check configuration, secret, store, migrations, TLS and issuer
  clients create|list|show|update|rotate-secret|delete
                             Manage OAuth clients
  users create|list|show|update|set-password|delete|links|unlink
                             Manage resource owners
  idps create|list|show|update|delete
                             Upstream identity providers people may sign in through
  grants list|revoke         See and revoke what users have granted to clients
  audit list                 The audit log: changes and sign-ins, newest first
  scopes create|list|delete  Manage the scope registry shown on the consent page
  resources create|list|delete
                             Manage the resource servers tokens may be issued for (RFC 8707)
  keys rotate|list|revoke    Manage token signing keys
  initial-access-tokens create|list|delete
                             Tokens that let clients register themselves (RFC 7591)
  completion bash            Print a bash completion script: source <(gatehouse completion bash)
  version                    Print the version (also --version)

Only serve, init and migrate create or migrate a store; every other command needs an existing,
current store and refuses otherwise, saying what to run.

Options for every command (before or after it):
  --data-dir DIR             Data directory (env GATEHOUSE_DATA_DIR, default ./data)
  --database-url URL         postgres://… for PostgreSQL (env DATABASE_URL); default SQLite in DIR
  --json                     Machine-readable output; errors as {"error","message"} on stderr
  -h, --help                 Help for a command: gatehouse <command> --help
  -V, --version              Print the version

Environment: GATEHOUSE_SECRET or GATEHOUSE_SECRET_FILE, the server secret (required with PostgreSQL).
Exit codes: 0 done, 1 refused or failed, 2 usage error.
`;

export const SERVE_HELP = `Usage: gatehouse serve [options]

  --port N                   Port, 1-65535 (env PORT, default 8443)
  --host H                   Address to listen on (env HOST, default localhost)
  --issuer URL               Public base URL (env GATEHOUSE_ISSUER, default https://localhost:<port>)
  --base-path /api           Mount every path under this prefix (default: none)
  --tls-cert FILE            PEM certificate (env GATEHOUSE_TLS_CERT); default: a self-signed
  --tls-key FILE             development certificate in <data-dir>/tls/, generated once
  --trust-proxy              Plain HTTP behind a TLS-terminating proxy that sets X-Forwarded-*
  --workers N                Worker processes, 1-256 (default 1)

Creates the store and applies pending migrations if needed. Refuses to start when the secret is not
the one the store's signing keys were sealed under.

Environment: GATEHOUSE_SECRET or GATEHOUSE_SECRET_FILE (32+ random bytes, base64url) seals signing
keys and signs cookies. With SQLite and neither set, one is generated into <data-dir>/secret when the
store is created; with PostgreSQL one of them is required.
`;

export const INIT_HELP = `Usage: gatehouse init [--data-dir DIR | --database-url URL] [--json]

Creates a new store: applies the migrations, records a check value of the server secret, registers
the built-in scopes and makes the first signing key. On an existing, current store it does nothing.
With SQLite and no GATEHOUSE_SECRET(_FILE), a secret is generated into <data-dir>/secret.
`;

export const CHECK_HELP = `Usage: gatehouse check [--data-dir DIR | --database-url URL] [--json]
                       [serve's --port, --host, --issuer, --base-path, --tls-cert, --tls-key,
                        --trust-proxy]

Checks, one line each: the configuration is valid; the store is reachable; its migrations are
current; the secret opens the signing keys; the TLS certificate is valid (and when it expires); the
issuer is https. Give it the flags serve is started with, so it checks that configuration. Changes
nothing. Exit 1 when any check fails.

A "warn" line is not a failure: the development certificate (localhost only) would serve an issuer
of another name, which its clients refuse (give --tls-cert and --tls-key, or --trust-proxy).
`;

export const CLIENTS_HELP = `Usage:
  gatehouse clients create --name NAME [--redirect-uri URI]... [--grant-types LIST]
                           [--scopes "a b"] [--public] [--token-type bearer|mac]
                           [--post-logout-redirect-uri URI]... [--id-token-signed-response-alg ALG]
                           [--auth-method METHOD [--jwks-uri URL | --jwks-file FILE]]
                           [--require-par | --no-require-par]
                           [--require-dpop | --no-require-dpop] [--require-mfa | --no-require-mfa]
                           [--exchange-target URI]...
                           [--identity-providers ID,ID | --all-identity-providers] [--json]
  gatehouse clients list [--registration operator|token|open|document] [--json]
  gatehouse clients show CLIENT_ID [--json]
  gatehouse clients update CLIENT_ID [--name NAME] [--redirect-uri URI]... [--grant-types LIST]
                           [--scopes "a b"] [--token-type bearer|mac]
                           [--post-logout-redirect-uri URI]... [--id-token-signed-response-alg ALG]
                           [--auth-method METHOD] [--jwks-uri URL | --jwks-file FILE]
                           [--require-par | --no-require-par]
                           [--require-dpop | --no-require-dpop] [--require-mfa | --no-require-mfa]
                           [--exchange-target URI]...
                           [--identity-providers ID,ID | --all-identity-providers] [--json]
  gatehouse clients rotate-secret CLIENT_ID [--json]
  gatehouse clients delete CLIENT_ID

  --grant-types LIST   Comma-separated: authorization_code, implicit, password,
                       client_credentials, refresh_token, token_exchange (short for
                       urn:ietf:params:oauth:grant-type:token-exchange, RFC 8693; confidential
                       clients only), device_code (short for
                       urn:ietf:params:oauth:grant-type:device_code, RFC 8628).
                       Default: authorization_code,refresh_token with a redirect URI,
                       client_credentials without. A device (a TV, a command-line tool) is a
                       public client: --public --grant-types device_code,refresh_token.
  --public             No secret (native and browser apps); PKCE S256 required.
  --token-type         bearer (default) or mac.
  --post-logout-redirect-uri URI
                       Where OpenID Connect RP-initiated logout may send the browser back to;
                       repeatable, exact match, the same rules as --redirect-uri. Given alone as ''
                       on update, clears the list.
  --id-token-signed-response-alg ALG
                       RS256 (default) or ES256: how the client's OpenID Connect ID tokens are signed.
  --auth-method METHOD How the client authenticates at /token, /introspect and /revoke:
                       client_secret_basic (default; client_secret_post is accepted too),
                       client_secret_post, private_key_jwt (RFC 7523: a signed JWT, no secret) or
                       none (the same as --public).
  --jwks-uri URL       private_key_jwt: the https URL where the client publishes its public keys
                       (fetched when needed, cached 5 minutes; a non-public address only with
                       GATEHOUSE_ALLOW_PRIVATE_JWKS_URI=true).
  --jwks-file FILE     private_key_jwt: a JWK Set file ({"keys": [...]}) of the client's public keys
                       (RSA 2048+ bits, EC P-256 or Ed25519; private and symmetric keys are refused).
                       A private_key_jwt client has exactly one of --jwks-uri and --jwks-file.
  --require-par        /authorize answers this client only with a request_uri it got from POST /par
                       (RFC 9126 pushed authorization requests); --no-require-par lifts it on update.
  --require-dpop       Every token request of this client must carry a DPoP proof, so its access
                       tokens are always bound to its key (RFC 9449 dpop_bound_access_tokens); not
                       with --token-type mac or the implicit grant. --no-require-dpop lifts it.
  --require-mfa        The client's users sign in with a password and a second factor (an
                       authenticator app or a recovery code); one who has none sets up an
                       authenticator app right after the password, and the password grant refuses
                       them. --no-require-mfa lifts it.
  --exchange-target URI
                       token_exchange: a registered resource this client may name as resource or
                       audience when it exchanges a token (RFC 8693); repeatable. Without any, an
                       exchanged token keeps the subject token's own audience. Given alone as ''
                       on update, clears the list.
  --identity-providers ID,ID
                       The upstream identity providers (gatehouse idps list) the client's sign-in
                       page offers, in this order; '' offers none. Without it a client offers every
                       provider; --all-identity-providers goes back to that on update.

update changes the settings given and keeps the others (--redirect-uri or --post-logout-redirect-uri
given replaces that list).
list shows how each client was registered: by an operator, or by itself at /register (RFC 7591) with
an initial access token (token) or with none (open), or not at all: a client whose id is the https
URL of its Client ID Metadata Document (document; GATEHOUSE_CLIENT_ID_METADATA_DOCUMENTS=on), stored
as its document was last fetched; --registration lists only those. A document's client is changed by
changing its document, not by update; delete forgets it until it is next used.
The client secret is printed once, at creation and by rotate-secret (the old one stops working at
once); only its hash is stored. A private_key_jwt client has no secret; changing a client to a
secret method makes it one, printed once.
`;

export const USERS_HELP = `Usage:
  gatehouse users create --username NAME --password-stdin [--email ADDRESS] [--name NAME] [--admin]
                         [--json]
  gatehouse users list [--json]
  gatehouse users show (USER_ID | --username NAME) [--json]
  gatehouse users update USER_ID [--username NEW] [--email ADDRESS] [--name NAME]
                         [--admin | --no-admin] [--disabled | --enabled] [--json]
  gatehouse users update --username NAME [--new-username NEW] [--email ADDRESS] [--name NAME]
                         [--admin | --no-admin] [--disabled | --enabled] [--json]
  gatehouse users set-password (USER_ID | --username NAME) --password-stdin [--json]
  gatehouse users delete (USER_ID | --username NAME)
  gatehouse users reset-mfa (USER_ID | --username NAME) [--json]
  gatehouse users links (USER_ID | --username NAME) [--json]
  gatehouse users unlink (USER_ID | --username NAME) LINK_ID [--json]

--password-stdin reads the password from a pipe (printf '%s' "$PW" | gatehouse users create ...),
or on a terminal asks for it twice without showing it. A new password ends the user's browser
sessions and refresh tokens.

--email and --name are the user's OpenID Connect claims (UserInfo and ID tokens, under the email
and profile scopes); optional, and an empty value ('') removes them. email_verified becomes true
when the user follows a link mailed to the address, and false again when the address changes.

--admin makes the user an administrator: only then may a token issued for them carry the admin
scope (the /v1 management API, the admin console); --no-admin takes the role away, and /v1 refuses
their tokens from then on. A client's own admin (client_credentials) does not depend on it.

reset-mfa removes the user's second factors, the authenticator app and every recovery code, for a
user who lost both: their next sign-in takes the password alone, or leads them to set an app up
again when GATEHOUSE_REQUIRE_MFA or the client requires one. Passkeys stay: each is a way in of
its own, removed on the security page. Nothing secret is shown.

show lists what an operator may know of a user: email, name, the administrator role, whether they
are disabled, how many browser sessions they have, and their ways of signing in (a password set;
passkeys, an authenticator app, recovery codes left), never a secret.

links lists the user's links to upstream identity providers (gatehouse idps): the provider, the
upstream account's subject and label, when it was linked and last used. unlink removes one, by the
id links shows: the user no longer signs in through that upstream account (their other ways stay).

--disabled stops every sign-in of the user, whatever the method, and the password grant: their
browser sessions end and their grants are revoked, so refresh tokens and access tokens stop working
at once. --enabled lets them sign in again; what was ended stays ended.
`;

export const IDPS_HELP = `Usage:
  gatehouse idps create --name NAME --client-id ID (--issuer URL | --authorization-endpoint URL
                        --token-endpoint URL --userinfo-endpoint URL --subject-claim CLAIM)
                        [--client-secret-stdin] [--client-auth METHOD] [--id ID] [--scopes "a b"]
                        [--username-claim CLAIM] [--email-claim CLAIM] [--email-verified-claim CLAIM]
                        [--name-claim CLAIM] [--link-by-verified-email] [--trust-upstream-assurance]
                        [--required-acr ACR] [--logo-uri URL] [--json]
  gatehouse idps list [--json]
  gatehouse idps show ID [--json]
  gatehouse idps update ID [--name NAME] [--issuer URL] [--authorization-endpoint URL]
                        [--token-endpoint URL] [--userinfo-endpoint URL] [--client-id ID]
                        [--client-secret-stdin] [--client-auth METHOD] [--scopes "a b"]
                        [--subject-claim CLAIM] [--username-claim CLAIM] [--email-claim CLAIM]
                        [--email-verified-claim CLAIM] [--name-claim CLAIM]
                        [--link-by-verified-email | --no-link-by-verified-email]
                        [--trust-upstream-assurance | --no-trust-upstream-assurance]
                        [--required-acr ACR] [--logo-uri URL] [--json]
  gatehouse idps delete ID [--json]

Upstream identity providers: the sign-in page shows "Continue with NAME" for each, and a person who
signs in there gets an account here, linked to the upstream one (or linked to theirs, see below).

  --issuer URL         An OpenID Provider: its endpoints are found by discovery
                       (URL/.well-known/openid-configuration), checked now; create and update refuse
                       an issuer whose discovery fails, saying why. TLS is verified as Node does
                       (NODE_EXTRA_CA_CERTS adds a private CA); a private or loopback address is
                       allowed.
  --authorization-endpoint URL, --token-endpoint URL, --userinfo-endpoint URL
                       A plain OAuth 2.0 provider instead (GitHub and the like): all three, https.
                       The person is read from userinfo, through the claim mapping.
  --subject-claim CLAIM
                       The userinfo member that names the person for good (GitHub: id); required
                       for a plain OAuth 2.0 provider, sub for an OpenID Provider.
  --username-claim, --email-claim, --email-verified-claim, --name-claim CLAIM
                       Where the user name, email, whether the email is verified and the full name
                       are read (default preferred_username, email, email_verified, name); a dotted
                       path reaches into objects.
  --client-id ID       The client id the provider issued to Gatehouse.
  --client-secret-stdin
                       Its client secret, from a pipe (printf '%s' "$SECRET" | gatehouse idps ...)
                       or asked for without echo on a terminal. Sealed under the server secret at
                       once; never shown again (show says only whether one is set).
  --client-auth METHOD client_secret_basic (the default with a secret), client_secret_post,
                       private_key_jwt (Gatehouse makes an ES256 key pair and prints its public key
                       to register at the provider; the private key never leaves it) or none (a
                       public client: PKCE alone).
  --id ID              The provider's id: lower-case letters, digits and hyphens (default: from the
                       name). It is in the redirect URI, so it cannot change.
  --scopes "a b"       What is asked of the provider (default for an OpenID Provider: openid email
                       profile; openid is required there).
  --link-by-verified-email
                       A first sign-in through this provider joins the local user with that email
                       address, when the provider says it is verified (never an unverified one).
                       Only for a provider you trust to verify addresses. Without it, a person with
                       an account here links it by signing in to it first.
  --trust-upstream-assurance
                       The provider's amr and acr count here (a two-factor sign-in upstream is one
                       here); without it, a sign-in through it is one factor.
  --required-acr ACR   Asked of the provider (acr_values), and a sign-in without it is refused.
  --logo-uri URL       An https image shown on the provider's button.

create prints the redirect URI to register at the provider: <issuer>/sign-in/callback/<ID> (with
--json, the provider with its id and redirect_uri). update changes what is given and keeps the rest
(--required-acr '' and --logo-uri '' remove them); a new --issuer is discovered again. delete removes
the provider, every user's link through it (it says how many), and it from clients that named it.
`;

export const GRANTS_HELP = `Usage:
  gatehouse grants list (--user USER_ID_OR_NAME | --client CLIENT_ID) [--json]
  gatehouse grants revoke GRANT_ID [--json]

Lists the grants in force (not revoked, not expired). Revoking a grant retires its refresh tokens,
and its access tokens fail introspection and validation from then on.
`;

export const AUDIT_HELP = `Usage:
  gatehouse audit list [--type TYPE]... [--user USER_ID] [--client CLIENT_ID] [--since TIME]
                       [--until TIME] [--limit N] [--cursor CURSOR] [--json]

Lists audit events, newest first: every administrative change (who, what, before and after, from
where), sign-ins and their failures, second factors, passwords, consents and revocations. --type
takes an event type (client.updated, sign-in.failed, …), repeated or joined by commas; TIME is
RFC 3339 (2026-01-31T12:00:00Z). At most --limit events (default 50, at most 200); when more are
left, the last line (or "next_cursor" with --json) gives the --cursor of the next page. Events older
than GATEHOUSE_AUDIT_RETENTION_DAYS (90) are purged.
`;

export const SCOPES_HELP = `Usage:
  gatehouse scopes create NAME --description TEXT
  gatehouse scopes list [--json]
  gatehouse scopes delete NAME

The built-in scopes profile, admin, openid, email and offline_access cannot be deleted.
`;

export const RESOURCES_HELP = `Usage:
  gatehouse resources create --uri URI [--scopes "a b"] [--name NAME] [--json]
  gatehouse resources list [--json]
  gatehouse resources delete URI [--json]

Resource servers (RFC 8707 resource indicators): a client names one with the resource parameter at
/authorize and /token, and its access tokens carry the URI as their audience (aud). A resource not
registered here is refused with invalid_target.

  --uri URI        Absolute https URI (http only on localhost, 127.0.0.1 or [::1]), no fragment;
                   kept in canonical form (https://API.example/ is https://api.example).
  --scopes "a b"   The scopes it offers; a request's scopes must each be offered by one of the
                   resources it names. Without --scopes it accepts any scope the client has. A
                   scope not registered yet is registered, as by clients create --scopes.
  --name NAME      What you call it (optional).

The issuer itself (Gatehouse's own API, /v1 and /userinfo) is always a resource and is not
registered. Deleting a resource refuses new requests for it at once; access tokens already issued
for it stay valid until they expire.
`;

export const KEYS_HELP = `Usage:
  gatehouse keys rotate [--json]       New active signing keys; retired keys stay in /jwks for a week
  gatehouse keys list [--json]
  gatehouse keys revoke KID [--json]   Revoke a compromised key: gone from /jwks, its tokens refused;
                                       an active key is replaced by a new one first

The ring keeps one active key per algorithm: GATEHOUSE_SIGNING_ALG's for access tokens, and RS256
and ES256 for OpenID Connect ID tokens (each client's id_token_signed_response_alg). Rotation makes
a new key of each.
`;

export const MIGRATE_HELP = `Usage: gatehouse migrate   Apply pending database migrations (serve does this too)

Creates the store when there is none. Refuses, changing nothing, when the secret is not the store's.
`;

export const INITIAL_ACCESS_TOKENS_HELP = `Usage:
  gatehouse initial-access-tokens create [--expires-in SECONDS] [--scopes "a b"] [--json]
  gatehouse initial-access-tokens list [--json]
  gatehouse initial-access-tokens delete ID [--json]

An initial access token (RFC 7591 §3) lets software register OAuth clients at /register, sent as
Authorization: Bearer <token>; with GATEHOUSE_DYNAMIC_REGISTRATION=token the server requires one.
The token is printed once and stored only as a hash. It registers any number of clients until it
expires (--expires-in, default 86400 seconds, at most a year) or is deleted; list shows how many each
one registered. Deleting a token leaves the clients it registered (gatehouse clients list
--registration token finds them).

  --scopes "a b"   The scopes its clients may have (never admin); by default those open
                   registration allows (GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES).

Clients that register themselves get only the code flow (authorization_code, refresh_token), as a
public client with PKCE or a confidential one with a secret.
`;

export const COMPLETION_HELP = `Usage: gatehouse completion bash

Prints a bash completion script for gatehouse: its commands, their actions and each action's flags
(after a flag that takes a value, file names). Load it in the current shell with
  source <(gatehouse completion bash)
or install it for every shell with
  gatehouse completion bash > ~/.local/share/bash-completion/completions/gatehouse
`;
