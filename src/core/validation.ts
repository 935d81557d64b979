/** Bad input to a management operation, naming the field at fault. */
export class ValidationError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'ValidationError';
  }
}

/** The operation would break a uniqueness rule (a user name already taken, …). */
export class ConflictError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConflictError';
  }
}

/** The thing an operation names does not exist. */
export class NotFoundError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'NotFoundError';
  }
}
