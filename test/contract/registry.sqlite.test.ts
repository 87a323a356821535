import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { parseBundle } from '../../src/bundle/parse.ts';
import { openRegistryStore } from '../../src/store/open-registry.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import { TEST_API_KEY, smallBundle } from '../fixtures/small-bundle.ts';
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

const tempFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-contract-')), 'registry.sqlite');

registryContract('sqlite', async () => new SqliteRegistryStore(tempFile()));
toolsOfServersContract('sqlite', async () => new SqliteRegistryStore(tempFile()));
mcpServerContract('sqlite', async () => new SqliteRegistryStore(tempFile()));
mcpServerImportContract('sqlite', async () => new SqliteRegistryStore(tempFile()));
mcpServerReadyContract('sqlite', async () => new SqliteRegistryStore(tempFile()));
const openInsights = async () => {
  const file = tempFile();
  return { store: new SqliteRegistryStore(file), another: async () => new SqliteRegistryStore(file) };
};
insightContract('sqlite', openInsights);
insightPagesContract('sqlite', openInsights);
outboxContract('sqlite', openInsights);
insightRetentionContract('sqlite', openInsights);
detectionStateContract('sqlite', async () => new SqliteRegistryStore(tempFile()));

describe('sqlite registry engine specifics', () => {
  it('opens registry.sqlite in DATA_DIR, creating the directory, and migrates once', async () => {
    const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-open-')), 'nested', 'data');
    const store = await openRegistryStore(loadConfig({ DATA_DIR: dataDir }));
    expect(store.engine).toBe('sqlite');
    await store.importBundle(parseBundle(smallBundle()));
    await store.close();
    const reopened = await openRegistryStore(loadConfig({ DATA_DIR: dataDir }));
    expect(await reopened.isEmpty()).toBe(false);
    await reopened.close();
    const db = new DatabaseSync(path.join(dataDir, 'registry.sqlite'));
    expect(
      db
        .prepare('SELECT name FROM schema_migrations')
        .all()
        .map((r) => r.name),
    ).toEqual([
      '001_init.sql',
      '002_sort_index.sql',
      '003_repos.sql',
      '004_api_json.sql',
      '005_relationship_forms.sql',
      '006_mcp_servers.sql',
      '007_insights.sql',
      '008_generation.sql',
      '009_webhook_fairness.sql',
      '010_detection_pages.sql',
      '011_insight_detail.sql',
      '012_insights_no_generation.sql',
      '013_insight_retention.sql',
    ]);
    expect(db.prepare('PRAGMA journal_mode').get()?.journal_mode).toBe('wal');
    db.close();
  });

  it('upgrades a file written before repositories: artifacts keep the repo_id of their documents', async () => {
    const file = tempFile();
    const old = new DatabaseSync(file);
    const dir = path.join(import.meta.dirname, '../../src/store/sqlite/migrations');
    old.exec('CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
    for (const name of ['001_init.sql', '002_sort_index.sql']) {
      old.exec(fs.readFileSync(path.join(dir, name), 'utf8'));
      old.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(name, '2026-01-01T00:00:00Z');
    }
    await writeOldArtifacts('sqlite', (sql) => old.exec(sql));
    old.close();
    const progress: string[] = [];
    const store = new SqliteRegistryStore(file, (message) => progress.push(message));
    expect(progress).toEqual([
      'ready-to-send documents: 1 row written, done',
      'ready relationships: 2 rows written, done',
    ]);
    const db = new DatabaseSync(file);
    await expectOldArtifactsUpgraded(store, async (id) => {
      const row = db.prepare('SELECT api_json FROM artifacts WHERE id = ?').get(id);
      return (row?.api_json as string | null | undefined) ?? null;
    });
    db.close();
    await store.close();
  });

  it('drops the forms of agents whose identity an INSERT OR REPLACE removes (no delete trigger fires)', async () => {
    const file = tempFile();
    const store = new SqliteRegistryStore(file);
    const db = new DatabaseSync(file);
    // An agent's stored identity: 'no form' when its form was dropped, null when it has none.
    const identityOf = async (reader: SqliteRegistryStore, id: string) => {
      const page = await reader.findReadyArtifacts({
        kind: 'agent',
        workspaceIds: ['ws-a', 'ws-a-other', 'ws-a-sub', 'ws-a-team'],
        sorts: [{ field: 'name', desc: false }],
        limit: 50,
        offset: 0,
      });
      const extras = page.items.find((a) => a.id === id)?.extras;
      return extras === undefined ? 'no form' : (JSON.parse(extras.identity ?? 'null') as unknown);
    };
    try {
      await store.importBundle(parseBundle(smallBundle()));
      expect(await identityOf(store, 'ag-2')).toMatchObject({ client_id: 'client-ag-2' });
      // ag-3 takes ag-2's client id: SQLite deletes ag-2's identity row to make room.
      db.exec(
        "INSERT OR REPLACE INTO identities (agent_id, client_id, credential_kind) VALUES ('ag-3', 'client-ag-2', 'oidc_client')",
      );
      expect(await identityOf(store, 'ag-2')).toBe('no form');
      await store.close();
      const reopened = new SqliteRegistryStore(file);
      expect(await identityOf(reopened, 'ag-2')).toBeNull();
      expect(await identityOf(reopened, 'ag-3')).toEqual({ client_id: 'client-ag-2', credential_kind: 'oidc_client' });
      await reopened.close();
    } finally {
      db.close();
    }
  });

  it('keeps the ready relationship forms current (imports, an older writer, other fingerprints)', async () => {
    const file = tempFile();
    const db = new DatabaseSync(file);
    try {
      await expectRelationshipFormsFollowChanges(
        async () => new SqliteRegistryStore(file),
        async (sql) => db.exec(sql),
      );
    } finally {
      db.close();
    }
  });

  it('keeps the ready-to-send forms with their documents (re-import, an older writer, other schemas)', async () => {
    const file = tempFile();
    const db = new DatabaseSync(file);
    try {
      await expectReadyDocumentsKept(
        async () => new SqliteRegistryStore(file),
        async (sql) => db.exec(sql),
        async () =>
          (db.prepare("SELECT api_json FROM artifacts WHERE id = 'tl-1' AND is_latest = 1").get()?.api_json as
            string | null) ?? null,
      );
    } finally {
      db.close();
    }
  });

  it('never writes a clear API key to disk', async () => {
    const file = tempFile();
    const store = new SqliteRegistryStore(file);
    await store.importBundle(parseBundle(smallBundle()));
    await store.close();
    for (const f of fs.readdirSync(path.dirname(file))) {
      expect(fs.readFileSync(path.join(path.dirname(file), f)).includes(TEST_API_KEY)).toBe(false);
    }
  });

  it('sees a commit of another connection through its generation', async () => {
    const file = tempFile();
    const service = new SqliteRegistryStore(file);
    const cli = new SqliteRegistryStore(file);
    const before = await service.generation();
    await cli.importBundle(parseBundle(smallBundle()));
    expect(await service.generation()).not.toBe(before);
    expect(await service.isEmpty()).toBe(false);
    await cli.close();
    await service.close();
  });
});
