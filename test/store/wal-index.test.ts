/**
 * The wal-index header (src/store/sqlite/wal-index.ts) as the SQLite registry's generation reads
 * it: it moves with every commit, by this connection, another one, or another process, also when
 * a commit restarts the WAL; it stays put without one; and it refuses what it cannot read
 * consistently, so the store asks SQLite instead. The generation itself is migration 008's counter,
 * read again only once the header moved.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import { WalIndexHeader } from '../../src/store/sqlite/wal-index.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-wal-index-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function walDatabase(): { file: string; db: DatabaseSync; header: WalIndexHeader } {
  const file = path.join(tempDir(), 'w.sqlite');
  const db = new DatabaseSync(file);
  db.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER)');
  return { file, db, header: new WalIndexHeader(`${file}-shm`) };
}

describe('the wal-index header', () => {
  it('moves with each commit of this connection, of another, and of another process, and only then', () => {
    const { file, db, header } = walDatabase();
    const seen = [header.read()];
    expect(seen[0]).toMatch(/^[0-9a-f]{80}$/);
    db.prepare('SELECT COUNT(*) FROM t').get();
    expect(header.read()).toBe(seen[0]);

    db.exec('INSERT INTO t VALUES (1)');
    seen.push(header.read());
    const other = new DatabaseSync(file);
    other.exec('INSERT INTO t VALUES (2)');
    seen.push(header.read());
    execFileSync(process.execPath, [
      '-e',
      `const { DatabaseSync } = require('node:sqlite'); new DatabaseSync(${JSON.stringify(file)}).exec('INSERT INTO t VALUES (3)');`,
    ]);
    seen.push(header.read());
    // A transaction that is rolled back, or still open, commits nothing.
    other.exec('BEGIN IMMEDIATE; INSERT INTO t VALUES (4)');
    seen.push(header.read());
    other.exec('ROLLBACK');
    expect(header.read()).toBe(seen.at(-1));

    expect(new Set(seen).size).toBe(4);
    expect(seen.at(-1)).toBe(seen.at(-2));
    other.close();
    db.close();
    header.close();
  });

  it('moves when a commit restarts the WAL after a full checkpoint', () => {
    const { db, header } = walDatabase();
    db.exec('INSERT INTO t VALUES (1)');
    const before = header.read();
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    db.exec('INSERT INTO t VALUES (2)');
    const after = header.read();
    expect(after).not.toBeNull();
    expect(after).not.toBe(before);
    db.close();
    header.close();
  });

  it('answers null for a missing, short, uninitialized or torn header', () => {
    const dir = tempDir();
    expect(new WalIndexHeader(path.join(dir, 'missing-shm')).read()).toBeNull();
    const shm = path.join(dir, 'x-shm');
    const good = Buffer.alloc(96);
    good[12] = 1; // isInit
    good.writeUInt32LE(7, 8); // iChange
    good.copy(good, 48, 0, 48);
    const cases: [string, Buffer][] = [
      ['short', good.subarray(0, 60)],
      ['uninitialized', Buffer.concat([good.subarray(0, 12), Buffer.from([0]), good.subarray(13)])],
      ['torn', Buffer.concat([good.subarray(0, 48), Buffer.alloc(48, 9)])],
    ];
    fs.writeFileSync(shm, good);
    const header = new WalIndexHeader(shm);
    expect(header.read()).toBe(good.toString('hex', 8, 48));
    for (const [name, bytes] of cases) {
      fs.writeFileSync(shm, bytes);
      expect(header.read(), name).toBeNull();
    }
    header.close();
  });
});

describe('the SQLite registry generation', () => {
  it('moves with another process’s plain insert into a table readers see, not into the outbox', async () => {
    const file = path.join(tempDir(), 'registry.sqlite');
    const service = new SqliteRegistryStore(file);
    const before = await service.generation();
    expect(before).toMatch(/^g\d+$/);
    expect(await service.generation()).toBe(before);
    const other = (sql: string) =>
      execFileSync(process.execPath, [
        '-e',
        `const { DatabaseSync } = require('node:sqlite'); new DatabaseSync(${JSON.stringify(file)}).exec(${JSON.stringify(sql)});`,
      ]);
    // Another process commits to the file, through plain SQL as any writer would: a lease moves the
    // wal-index header and not the generation; an organization moves both.
    other("INSERT INTO leases (name, holder, expires_ms) VALUES ('x', 'other', 1)");
    expect(await service.generation()).toBe(before);
    other("INSERT INTO organizations (id, name, status) VALUES ('org-x', 'X', 'active')");
    const afterOther = await service.generation();
    expect(afterOther).not.toBe(before);
    await service.importBundle(parseBundle(smallBundle()));
    expect(await service.generation()).not.toBe(afterOther);
    await service.close();
    await expect(service.generation()).rejects.toThrow(/closed/);
  });

  it('reads the wal-index of the real file when the database is opened through a link', async () => {
    const real = path.join(tempDir(), 'registry.sqlite');
    const first = new SqliteRegistryStore(real);
    const link = path.join(tempDir(), 'registry.sqlite');
    fs.symlinkSync(real, link);
    // A stray wal-index beside the link (the file lived here once): never the one read.
    fs.copyFileSync(`${real}-shm`, `${link}-shm`);
    await first.close();
    const service = new SqliteRegistryStore(link);
    const before = await service.generation();
    execFileSync(process.execPath, [
      '-e',
      `const { DatabaseSync } = require('node:sqlite'); new DatabaseSync(${JSON.stringify(real)}).exec("INSERT INTO organizations (id, name, status) VALUES ('org-y', 'Y', 'active')");`,
    ]);
    expect(await service.generation()).not.toBe(before);
    await service.close();
  });

  it('is not used when its page size is not the database’s', () => {
    const { file, db } = walDatabase();
    expect(WalIndexHeader.of(file, 4096)).toBeDefined();
    expect(WalIndexHeader.of(file, 8192)).toBeUndefined();
    expect(WalIndexHeader.of(path.join(tempDir(), 'missing.sqlite'), 4096)).toBeUndefined();
    db.close();
  });

  it('is moved by a trigger on each write to every table but the bookkeeping ones (migration 008)', async () => {
    const file = path.join(tempDir(), 'registry.sqlite');
    await new SqliteRegistryStore(file).close();
    const db = new DatabaseSync(file);
    const names = (type: string) =>
      (db.prepare('SELECT name FROM sqlite_schema WHERE type = ? ORDER BY name').all(type) as { name: string }[]).map(
        (r) => r.name,
      );
    // Writes no answer kept by generation shows: the outbox and its subscriptions' health,
    // detection's cursors, page positions and leases, insights (never kept: migration 012), and the
    // migrations' own records; the full-text index follows `artifacts`, whose triggers move the counter.
    const bookkeeping = [
      'detection_cursors',
      'detection_pages',
      'insights',
      'leases',
      'registry_generation',
      'schema_migrations',
      'webhook_deliveries',
      'webhook_subscription_health',
    ];
    const shown = names('table').filter((t) => !bookkeeping.includes(t) && !t.startsWith('artifacts_fts'));
    expect(shown).toContain('webhook_subscriptions');
    const triggers = names('trigger').filter((t) => t.includes('_generation_'));
    expect(triggers.sort()).toEqual(
      shown.flatMap((t) => ['delete', 'insert', 'update'].map((op) => `${t}_generation_${op}`)).sort(),
    );
    for (const name of triggers) {
      const [row] = db.prepare('SELECT sql FROM sqlite_schema WHERE name = ?').all(name) as { sql: string }[];
      const op = name.slice(name.lastIndexOf('_') + 1).toUpperCase();
      expect(row?.sql).toContain(`AFTER ${op} ON ${name.slice(0, name.indexOf('_generation_'))} BEGIN`);
      expect(row?.sql).toContain('UPDATE registry_generation SET n = n + 1 WHERE id = 1');
    }
    db.close();
  });

  it('reads the counter each time for an in-memory database (no wal-index)', async () => {
    const store = new SqliteRegistryStore(':memory:');
    const before = await store.generation();
    expect(before).toMatch(/^g\d+$/);
    await store.insights.tryLease('detection', 'me', 0, 1000);
    expect(await store.generation()).toBe(before);
    await store.importBundle(parseBundle(smallBundle()));
    expect(await store.generation()).not.toBe(before);
    await store.close();
  });
});
