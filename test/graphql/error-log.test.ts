/**
 * Every GraphQL error answered as a 5xx is logged with the request's trace id (DESIGN §7): the
 * client gets `internal_error` and nothing of the cause, the log gets the cause, the path and the
 * trace id. Errors of the caller (4xx) are not logged as failures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { startReplica, type Replica } from './replica.ts';

const SECRET = 'disk /var/lib/secret exploded';
const lines: Record<string, unknown>[] = [];

/** The registry with getUsers failing as a bug would: not a catalogue error. */
function failingUsers(store: RegistryStore): RegistryStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'getUsers')
        return async () => {
          throw new Error(SECRET);
        };
      return Reflect.get(target, prop, receiver);
    },
  });
}

let t: TestApp;
let logged: Replica;
beforeAll(async () => {
  t = await startTestApp();
  logged = await startReplica(t, {
    wrapRegistry: failingUsers,
    logger: {
      level: 'info',
      stream: {
        write: (line: string) => {
          lines.push(JSON.parse(line) as Record<string, unknown>);
        },
      },
    },
  });
});
afterAll(async () => {
  await logged.close();
  await t.close();
});

async function query(q: string, traceId: string) {
  const res = await logged.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: {
      ...(await t.auth('u-admin')),
      'content-type': 'application/json',
      traceparent: `00-${traceId}-${'1'.repeat(16)}-01`,
    },
    payload: JSON.stringify({ query: q }),
  });
  return { status: res.statusCode, text: res.body, body: res.json() };
}

describe('5xx errors of GraphQL are logged with their trace id', () => {
  it('a resolver that throws a non-catalogue error: internal_error to the client, the cause to the log', async () => {
    const traceId = 'a'.repeat(31) + '1';
    const res = await query('{ agent(id: "ag-1") { id creator { id } } }', traceId);
    expect(res.body.errors[0]).toMatchObject({
      path: ['agent', 'creator'],
      extensions: { code: 'internal_error', http: { status: 500 } },
    });
    expect(res.text).not.toContain('secret');
    const entry = lines.find((l) => l.trace_id === traceId && l.msg === 'graphql request failed');
    expect(entry).toMatchObject({ level: 50, status: 500, path: ['agent', 'creator'], err: { message: SECRET } });
  });

  it('errors of the caller are not logged as failures', async () => {
    const traceId = 'b'.repeat(31) + '2';
    const res = await query('{ agent(id: "nope") { id } }', traceId);
    expect(res.body.errors[0].extensions.code).toBe('not_found');
    expect(lines.filter((l) => l.trace_id === traceId && l.level === 50)).toEqual([]);
  });
});
