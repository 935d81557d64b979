export const MAIN_HELP = `gatehouse: OAuth 2.0 authorization server

Usage: gatehouse <command> [options]

Commands:
  serve                      Start the HTTPS server
  clients create|list|show|delete
                             Manage OAuth clients
  users create|list|delete   Manage resource owners
  scopes create|list|delete  Manage the scope registry shown on the consent page
  keys rotate|list|revoke    Manage token signing keys
  migrate                    Apply pending database migrations

Options for every command:
  --data-dir DIR             Data directory (env GATEHOUSE_DATA_DIR, default ./data)
  --database-url URL         postgres://… for PostgreSQL (env DATABASE_URL); default SQLite in DIR
  --json                     Machine-readable output
  -h, --help                 Help for a command: gatehouse <command> --help
`;

export const SERVE_HELP = `Usage: gatehouse serve [options]

  --port N                   Port (env PORT, default 8443)
  --host H                   Address to listen on (env HOST, default localhost)
  --issuer URL               Public base URL (env GATEHOUSE_ISSUER, default https://localhost:<port>)
  --base-path /api           Mount every path under this prefix (default: none)
  --tls-cert FILE            PEM certificate (env GATEHOUSE_TLS_CERT); default: a self-signed
  --tls-key FILE             development certificate in <data-dir>/tls/, generated once
  --trust-proxy              Plain HTTP behind a TLS-terminating proxy that sets X-Forwarded-*
  --workers N                Worker processes (default 1)

Environment: GATEHOUSE_SECRET or GATEHOUSE_SECRET_FILE (32+ random bytes, base64url) seals signing
keys and signs cookies; when neither is set, one is generated into <data-dir>/secret.
`;

export const CLIENTS_HELP = `Usage:
  gatehouse clients create --name NAME [--redirect-uri URI]... [--grant-types LIST]
                           [--scopes "a b"] [--public] [--token-type bearer|mac] [--json]
  gatehouse clients list [--json]
  gatehouse clients show CLIENT_ID [--json]
  gatehouse clients delete CLIENT_ID

  --grant-types LIST   Comma-separated: authorization_code, implicit, password,
                       client_credentials, refresh_token. Default: authorization_code,refresh_token
                       with a redirect URI, client_credentials without.
  --public             No secret (native and browser apps); PKCE S256 required.
  --token-type         bearer (default) or mac.

The client secret is printed once, at creation; only its hash is stored.
`;

export const USERS_HELP = `Usage:
  gatehouse users create --username NAME --password-stdin [--json]
  gatehouse users list [--json]
  gatehouse users delete (USER_ID | --username NAME)

The password is read from standard input: printf '%s' "$PW" | gatehouse users create ...
`;

export const SCOPES_HELP = `Usage:
  gatehouse scopes create NAME --description TEXT
  gatehouse scopes list [--json]
  gatehouse scopes delete NAME
`;

export const KEYS_HELP = `Usage:
  gatehouse keys rotate [--json]       New active signing key; retired keys stay in /jwks for a week
  gatehouse keys list [--json]
  gatehouse keys revoke KID [--json]   Revoke a compromised key: gone from /jwks, its tokens refused;
                                       the active key is replaced by a new one first
`;

export const MIGRATE_HELP = `Usage: gatehouse migrate   Apply pending database migrations (serve does this too)
`;
