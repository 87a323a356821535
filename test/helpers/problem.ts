import { expect } from 'vitest';
import { catalogue } from '../../src/errors.ts';

interface Injected {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** Asserts a problem+json response with this status and code; returns the parsed body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function expectProblem(res: Injected, status: number, code: keyof typeof catalogue): any {
  expect({ status: res.statusCode, body: res.body.slice(0, 300) }).toMatchObject({ status });
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(res.body);
  expect(body.code).toBe(code);
  expect(body.status).toBe(status);
  expect(catalogue[code].status).toBe(status);
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(body).toHaveProperty('trace_id');
  return body;
}
