/**
 * PostgreSQL going away in the middle of a store's query must fail that query, not the process.
 * A client checked out of the pool (sealing, ingestion, imports hold one) had no 'error' listener:
 * pg emitted an unhandled 'error' when its connection dropped and the replica exited (seen as an
 * ECONNRESET in the two-replica test). A proxy between the store and PostgreSQL holds the sealing
 * step's query, then drops every connection.
 */
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresTraces } from '../../src/store/postgres/open.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable } from '../contract/pg-schema.ts';

const up = await postgresReachable();
const schema = freshSchemaName('t_loss');

/** Forwards to PostgreSQL until `hold()`, then passes nothing on; `drop()` destroys every connection. */
async function proxy(target: URL) {
  const pairs: { client: net.Socket; upstream: net.Socket }[] = [];
  let held = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    pairs.push({ client, upstream });
    client.on('data', (d) => held || upstream.write(d));
    upstream.on('data', (d) => held || client.write(d));
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `postgres://${target.username || 'postgres'}@127.0.0.1:${(server.address() as net.AddressInfo).port}${target.pathname}`,
    hold: () => {
      held = true;
    },
    drop: () => {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

afterAll(async () => {
  if (up) await dropSchema(schema);
});

describe.skipIf(!up)('PostgreSQL lost mid-query', () => {
  it('fails the sealing step with an error and leaves the process running', async () => {
    const px = await proxy(new URL(PG_URL));
    const traces = await openPostgresTraces({ databaseUrl: px.url, requestTimeoutMs: 5000 }, schema, {
      sealEveryMs: 0,
    });
    try {
      px.hold(); // the step's statements go out and nothing comes back
      const sealing = traces.seal();
      const outcome = sealing.then(
        () => 'sealed',
        (err: unknown) => (err instanceof Error ? 'failed' : 'rejected'),
      );
      await new Promise((r) => setTimeout(r, 200));
      px.drop();
      expect(await outcome).toBe('failed');
      // An unhandled 'error' from the dropped client is reported by vitest as an unhandled error,
      // which fails the run even though this test's own assertions held.
    } finally {
      await traces.close().catch(() => undefined);
      await px.close();
    }
  });
});
