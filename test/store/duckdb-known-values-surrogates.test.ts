/**
 * KnownValues (duckdb/known-values.ts) over values with lone UTF-16 surrogates: the engine stores
 * them with U+FFFD in their place, so the filter holds a value in that stored form, whichever form
 * added it and whichever asks. A server first named as "srv-\ud800" is then counted when asked by
 * its stored name (the one the engine answers with), before and after a reopen, and when asked by
 * any lone form.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KnownValues } from '../../src/store/duckdb/known-values.ts';
import { ThreadedTraceStore } from '../../src/store/duckdb/threaded-store.ts';
import type { SpanRow } from '../../src/store/trace-port.ts';
import { toolCallRow } from '../fixtures/span-row.ts';

const NOW_S = Math.floor(Date.now() / 1000);
const scope = { orgId: 'org-k', workspaceIds: ['ws-k'], sinceS: NOW_S - 86_400 };
const calls = (mcp: string, n: number, from = 0): SpanRow[] =>
  Array.from({ length: n }, (_, i) =>
    toolCallRow(from + i, 'search', mcp, { org_id: 'org-k', workspace_id: 'ws-k', start_s: NOW_S - 60 - i }),
  );

describe('KnownValues, lone surrogates', () => {
  it('holds a value in its stored form: added in one form, asked in any', () => {
    const known = KnownValues.create(1 << 16);
    known.add('srv-\ud800');
    known.add('tool-\ufffd');
    expect(
      ['srv-\ufffd', 'srv-\ud800', 'srv-\udc00', 'tool-\udbff', 'tool-\ufffd'].map((v) => known.mayHold(v)),
    ).toEqual([true, true, true, true, true]);
    // A pair is a character of its own, not U+FFFD.
    expect(['srv-😀', 'srv-\ufffd\ufffd', 'tool-'].map((v) => known.mayHold(v))).toEqual([false, false, false]);
  });
});

describe('server usage of a server named with a lone surrogate, on the worker thread', () => {
  let store: ThreadedTraceStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('counts every call asked by the stored name or a lone form, before and after a reopen', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-known-lone-')), 'traces.duckdb');
    store = await ThreadedTraceStore.open(file, { sealEveryMs: 0 });
    await store.insertSpans([...calls('srv-\ud800', 3), ...calls('srv-\udc00', 2, 3)]);
    const asked = async (server: string) =>
      (await store?.serverUsage({ ...scope, servers: [server] }))?.map((r) => [r.server, r.calls]);
    expect(await asked('srv-\ufffd')).toEqual([['srv-\ufffd', 5]]);
    expect(await asked('srv-\udbff')).toEqual([['srv-\udbff', 5]]);
    await store.close();
    store = await ThreadedTraceStore.open(file, { sealEveryMs: 0 });
    expect(await asked('srv-\ud800')).toEqual([['srv-\ud800', 5]]);
    expect(await asked('srv-\ufffd')).toEqual([['srv-\ufffd', 5]]);
  });
});
