import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresRegistry } from '../../src/store/postgres/open.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable, withPgClient } from './pg-schema.ts';
import { parseBundle } from '../../src/bundle/parse.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { detectionStateContract } from './detection-state-contract.ts';
import { insightContract } from './insight-contract.ts';
import { insightPagesContract } from './insight-pages-contract.ts';
import { insightRetentionContract } from './insight-retention-contract.ts';
import { outboxContract } from './outbox-contract.ts';
import { mcpServerContract } from './mcp-server-contract.ts';
import { mcpServerImportContract } from './mcp-server-import-contract.ts';
import { mcpServerReadyContract } from './mcp-server-ready-contract.ts';
import {
  expectOldArtifactsUpgraded,
  expectReadyDocumentsKept,
  expectRelationshipFormsFollowChanges,
  registryContract,
  writeOldArtifacts,
} from './registry-contract.ts';
import { toolsOfServersContract } from './tools-of-servers-contract.ts';

const schemas: string[] = [];
if (await postgresReachable()) {
  registryContract('postgres', async () => {
    const schema = freshSchemaName('t_registry');
    schemas.push(schema);
    return openPostgresRegistry({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema);
  });
  toolsOfServersContract('postgres', async () => {
    const schema = freshSchemaName('t_registry_servers');
    schemas.push(schema);
    return openPostgresRegistry({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema);
  });
  const openFresh = async () => {
    const schema = freshSchemaName('t_registry_mcp');
    schemas.push(schema);
    return openPostgresRegistry({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema);
  };
  mcpServerContract('postgres', openFresh);
  mcpServerImportContract('postgres', openFresh);
  detectionStateContract('postgres', openFresh);
  mcpServerReadyContract('postgres', openFresh);
  const openInsights = async () => {
    const schema = freshSchemaName('t_registry_insights');
    schemas.push(schema);
    const open = () => openPostgresRegistry({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema);
    return { store: await open(), another: open };
  };
  insightContract('postgres', openInsights);
  insightPagesContract('postgres', openInsights);
  outboxContract('postgres', openInsights);
  insightRetentionContract('postgres', openInsights);
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });

  describe('postgres registry engine specifics', () => {
    it("an import waits for another writer's rows beyond the request statement timeout (replicas seeding at once)", async () => {
      const schema = freshSchemaName('t_registry_race');
      schemas.push(schema);
      const store = await openPostgresRegistry({ databaseUrl: PG_URL, requestTimeoutMs: 200 }, schema);
      const other = new pg.Client({ connectionString: PG_URL });
      await other.connect();
      try {
        // Another replica's import, uncommitted: it holds the row of org-a for a whole second.
        await other.query(`SET search_path TO ${schema}; BEGIN`);
        await other.query("INSERT INTO organizations VALUES ('org-a', 'Org A', 'active')");
        const importing = store.importBundle(parseBundle(smallBundle()));
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await other.query('COMMIT');
        expect((await importing).artifacts).toBe(12);
        expect((await store.getArtifacts(['ag-1'])).map((a) => a.version_ordinal)).toEqual([2]);
      } finally {
        await other.end();
        await store.close();
      }
    });

    it('keeps the ready-to-send forms with their documents (re-import, an older writer, other schemas)', async () => {
      const schema = freshSchemaName('t_registry_ready');
      schemas.push(schema);
      await withPgClient((client) =>
        expectReadyDocumentsKept(
          () => openPostgresRegistry({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema),
          async (sql) => client.query(`SET search_path TO ${schema}; ${sql}`),
          async () =>
            (
              await client.query<{ api_json: string | null }>(
                `SELECT api_json FROM ${schema}.artifacts WHERE id = 'tl-1' AND is_latest`,
              )
            ).rows[0]?.api_json ?? null,
        ),
      );
    });

    it('keeps the ready relationship forms current (imports, an older writer, other fingerprints)', async () => {
      const schema = freshSchemaName('t_registry_forms');
      schemas.push(schema);
      await withPgClient((client) =>
        expectRelationshipFormsFollowChanges(
          () => openPostgresRegistry({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema),
          async (sql) => client.query(`SET search_path TO ${schema}; ${sql}`),
        ),
      );
    });

    it('no import builds a form from a row another writer changed and has not committed', async () => {
      const schema = freshSchemaName('t_registry_forms_race');
      schemas.push(schema);
      const store = await openPostgresRegistry({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema);
      const writer = new pg.Client({ connectionString: PG_URL });
      await writer.connect();
      try {
        await store.importBundle(parseBundle(smallBundle()));
        await writer.query(`SET search_path TO ${schema}`);
        // A committed change drops tl-1's form; then, in an open transaction, ag-1 moves to ws-a-other.
        await writer.query("UPDATE relationships SET label = 'x' WHERE from_id = 'ag-1' AND to_id = 'tl-1'");
        await writer.query('BEGIN');
        await writer.query("UPDATE artifacts SET workspace_id = 'ws-a-other' WHERE id = 'ag-1' AND is_latest");
        // An import meanwhile (it fills every missing form): it must not build tl-1's form before the
        // move commits. Whatever it waits on (the imports' lock the trigger holds, or, were that
        // missing, ag-1's row after reading its old workspace), the move commits then.
        let done = false as boolean; // set when the import ends
        const importing = store
          .importBundle(parseBundle({ organizations: [{ id: 'org-z', name: 'Z', status: 'active' }] }))
          .finally(() => (done = true));
        const waitingOnLock = async () => {
          const { rows } = await writer.query<{ n: number }>(
            'SELECT COUNT(*)::int AS n FROM pg_locks WHERE NOT granted',
          );
          return (rows[0]?.n ?? 0) > 0;
        };
        while (!done && !(await waitingOnLock())) await new Promise((resolve) => setTimeout(resolve, 20));
        await writer.query('COMMIT');
        await importing;
        const { rows } = await writer.query<{ relationship_ends: string }>(
          "SELECT relationship_ends FROM artifacts WHERE id = 'tl-1' AND is_latest",
        );
        expect(JSON.parse(rows[0]?.relationship_ends ?? 'null')).toEqual(['ws-a-other']);
      } finally {
        await writer.end();
        await store.close();
      }
    });

    it('upgrades a schema written before repositories: artifacts keep the repo_id of their documents', async () => {
      const schema = freshSchemaName('t_registry_old');
      schemas.push(schema);
      await withPgClient(async (client) => {
        await client.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
        await client.query(
          fs.readFileSync(
            path.join(import.meta.dirname, '../../src/store/postgres/migrations/registry/001_init.sql'),
            'utf8',
          ),
        );
        await client.query(
          `CREATE TABLE registry_schema_migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now());
           INSERT INTO registry_schema_migrations (name) VALUES ('001_init.sql')`,
        );
        await writeOldArtifacts('postgres', (sql) => client.query(sql));
      });
      const progress: string[] = [];
      const store = await openPostgresRegistry({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema, (message) =>
        progress.push(message),
      );
      try {
        expect(progress).toEqual([
          'ready-to-send documents: 1 row written, done',
          'ready relationships: 2 rows written, done',
        ]);
        await withPgClient((client) =>
          expectOldArtifactsUpgraded(store, async (id) => {
            const { rows } = await client.query<{ api_json: string | null }>(
              `SELECT api_json FROM ${schema}.artifacts WHERE id = $1`,
              [id],
            );
            return rows[0]?.api_json ?? null;
          }),
        );
      } finally {
        await store.close();
      }
    });
  });
} else {
  describe.skip('registry store contract: postgres (no server)', () => undefined);
}
