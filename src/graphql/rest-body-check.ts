/**
 * GraphQL input made a REST body is checked by that body's own JSON Schema, so both transports
 * accept the same requests and refuse the others with REST's field errors (invalid_field or
 * validation_failed, REST pointers): trace statistics, webhook subscriptions, insight settings.
 */
import { Ajv } from 'ajv';
import { fieldErrors } from '../errors.ts';
import { toFieldErrors } from '../shared/field-errors.ts';

const ajv = new Ajv({ allErrors: true, strict: false });

/** The check of `schema`: throws REST's field errors for a body that breaks it. */
export function restBodyCheck(schema: object): (body: unknown) => void {
  const validate = ajv.compile(schema);
  return (body) => {
    if (!validate(body)) throw fieldErrors(toFieldErrors(validate.errors ?? []));
  };
}
