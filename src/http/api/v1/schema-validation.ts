import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { Problem } from './problem.js';

/** A JSON Pointer from TypeBox (`/redirect_uris/0`) as the dotted field name problems report. */
function fieldName(part: string, pointer: string): string {
  const path = pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
  return path === '' ? part : path;
}

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path' };

/**
 * Validates with TypeBox instead of Fastify's default Ajv set-up, which silently strips unknown
 * properties and coerces types: here an unknown or malformed field is a 400 naming the field.
 * Only path and query values, which arrive as strings, are converted to the declared types.
 */
export const typeboxValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = TypeCompiler.Compile(schema);
  const convert = httpPart === 'querystring' || httpPart === 'params';
  const part = PART_NAMES[httpPart ?? 'body'] ?? 'body';
  const integers = convert ? integerProperties(schema) : [];
  return (input: unknown) => {
    // TypeBox converts "1e20" or "1.5" to an integer with parseInt (1): a whole number must be written
    // as one, or the request means something other than what was sent.
    for (const name of integers) {
      const raw = (input as Record<string, unknown> | undefined)?.[name];
      if (typeof raw === 'string' && !/^-?\d{1,16}$/.test(raw)) {
        return {
          error: new Problem(400, `${part} field "${name}": must be a whole number`, { field: name }),
        };
      }
    }
    let value = input;
    if (convert) value = Value.Convert(schema, Value.Default(schema, Value.Clone(input)));
    if (check.Check(value)) return { value };
    const first = check.Errors(value).First();
    const field = first === undefined ? part : fieldName(part, first.path);
    const detail =
      first === undefined
        ? `the ${part} is not valid`
        : first.message === 'Unexpected property'
          ? `unknown ${part} field "${field}"`
          : `${part} field "${field}": ${first.message.toLowerCase()}`;
    const problem = new Problem(400, value === null && part === 'body' ? 'a JSON body is required' : detail, {
      field,
    });
    return { error: problem };
  };
};

/** The names of an object schema's integer-typed properties (query and path values to parse strictly). */
function integerProperties(schema: TSchema): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.entries(properties)
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
}
