/**
 * An on/off environment variable: exactly `true` or `false` (unset or empty is `fallback`). Anything
 * else is refused with the variable's name, so a typo such as `yes` or `True` never silently leaves a
 * setting in the state the operator did not ask for.
 */
export function strictBoolean(name: string, value: string | undefined, fallback = false): boolean {
  if (value === undefined || value === '') return fallback;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new Error(`${name} must be true or false`);
}
