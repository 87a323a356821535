/**
 * The DuckDB appender (src/store/duckdb/appender.ts): rows in chunks of at most 2,048, and an
 * append that fails leaves nothing buffered. A DuckDB appender that is never closed flushes its
 * buffered rows when the garbage collector takes it, into whatever its connection has open then:
 * without the drop, rows of a rolled-back append show up after the next collection.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { DuckDBInstance, INTEGER, type DuckDBConnection } from '@duckdb/node-api';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { appendRows, type Layout } from '../../src/store/duckdb/appender.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

let instance: DuckDBInstance;
let conn: DuckDBConnection;
beforeEach(async () => {
  instance = await DuckDBInstance.create(':memory:');
  conn = await instance.connect();
  await conn.run('CREATE TABLE t (x INTEGER)');
});
afterEach(() => {
  conn.closeSync();
  instance.closeSync();
});

const values = async () =>
  (await conn.runAndReadAll('SELECT x FROM t ORDER BY x')).getRowObjectsJS().map((r) => Number(r.x));
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

it('appends any number of rows, a chunk of 2,048 at a time', async () => {
  await appendRows(conn, { table: 't' }, [[INTEGER, (x: number) => x]], upTo(5000));
  expect(await values()).toEqual(upTo(5000));
});

it('leaves no row of an append that failed, even once its appender is collected', async () => {
  // The first chunk is buffered when the second fails.
  const layout: Layout<number> = [
    [
      INTEGER,
      (x) => {
        if (x === 3000) throw new Error('no value for row 3000');
        return x;
      },
    ],
  ];
  await conn.run('BEGIN TRANSACTION');
  await expect(appendRows(conn, { table: 't' }, layout, upTo(4000))).rejects.toThrow('no value for row 3000');
  await conn.run('ROLLBACK');
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await conn.run('INSERT INTO t VALUES (-1)');
  expect(await values()).toEqual([-1]);
});
