/** The refusals of a store that does not belong to this secret or this version (secret-check.ts). */

const SECRET_MISMATCH_MESSAGE =
  "the secret does not open this database's signing keys: set GATEHOUSE_SECRET or GATEHOUSE_SECRET_FILE " +
  'to the secret the deployment was created with';

export class SecretMismatchError extends Error {
  override name = 'SecretMismatchError';
  readonly code = 'secret_mismatch';
  constructor() {
    super(SECRET_MISMATCH_MESSAGE);
  }
}

/** The store is missing, or its schema is not current: the command says what to run. */
export class StoreStateError extends Error {
  override name = 'StoreStateError';
  constructor(
    readonly code: 'store_missing' | 'migrations_pending',
    message: string,
  ) {
    super(message);
  }
}
