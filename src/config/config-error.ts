/** A setting that is missing or malformed: the message names the variable (or flag) and the form expected. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
