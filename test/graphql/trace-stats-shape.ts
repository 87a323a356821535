/**
 * Operation 1's answer as REST sends it and as GraphQL selects it (Skill.traceStats,
 * Agent.traceStats): the selection of the whole envelope, REST's JSON spelled the GraphQL way, and
 * one request asked both ways as u-admin.
 */
import { expect } from 'vitest';
import type { TestApp } from '../helpers/test-app.ts';
import { gql } from './helpers.ts';

const camel = (s: string) => s.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
/** REST's envelope as GraphQL spells it: camelCase keys, upper-case enums; groups/values stay JSON. */
function asGraphql(value: unknown, key = ''): unknown {
  if (key === 'groups' || key === 'values') return value;
  if (Array.isArray(value)) return value.map((v) => asGraphql(v));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), asGraphql(v, k)]));
  return ['request_type', 'measure', 'column_type'].includes(key) && typeof value === 'string'
    ? value.toUpperCase()
    : value;
}

const ENVELOPE = `data { ...Data } meta { warnings } comparison { startTimeUnixSeconds endTimeUnixSeconds data { ...Data } }`;
const DATA = `fragment Data on TraceStatsData {
  ... on ScalarStats { requestType results { queryName measure value unit } }
  ... on TableStats { requestType columns { name columnType unit } rows { groups values } }
  ... on TimeSeriesStats { requestType series { queryName measure unit groups points { timestampUnixSeconds value } } } }`;

/**
 * `restBody` to `restUrl` and `input` to `<root>(id) { traceStats }`, both as u-admin (each must
 * answer without error): REST's answer as GraphQL spells it, and GraphQL's.
 */
export async function restAndGraphql(
  t: TestApp,
  restUrl: string,
  root: 'skill' | 'agent',
  id: string,
  restBody: Record<string, unknown>,
  input: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ rest: unknown; graphql: any }> {
  const rest = await t.app.inject({
    method: 'POST',
    url: restUrl,
    headers: await t.auth('u-admin'),
    payload: restBody,
  });
  expect(rest.statusCode).toBe(200);
  const res = await gql(t, `{ ${root}(id: "${id}") { traceStats(input: ${input}) { ${ENVELOPE} } } } ${DATA}`);
  expect(res.errors).toBeUndefined();
  return { rest: asGraphql(rest.json()), graphql: res.data[root].traceStats };
}
