/**
 * PostgreSQL's import of a bundle's MCP server versions (store/import-bundle.ts), on the importing
 * transaction's connection, in chunks of a few statements each whatever their size: the stored
 * versions sharing each entry's name or id (checked by mcp-server-rows.ts `checkImport`), the new
 * versions inserted, the stored ones updated in place where something differs, every version of a
 * server moved to the bundle's workspace, then `is_latest` refreshed for every name.
 */
import type pg from 'pg';
import type { McpServerEntry } from '../../domain/types.ts';
import type { BundleWrites } from '../import-bundle.ts';
import { checkImport, MCP_SERVER_COLUMNS, nameAndVersion, storedInstant, type Neighbour } from '../mcp-server-rows.ts';
import { refreshLatest } from './mcp-servers.ts';

const CHUNK = 1000;

const NEIGHBOURS = `
  SELECT e.i, m.id, m.name, m.version, m.workspace_id
  FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS e(org_id, name, i)
  JOIN mcp_servers m ON m.org_id = e.org_id AND m.name = e.name COLLATE "C"
  UNION ALL
  SELECT e.i, m.id, m.name, m.version, m.workspace_id
  FROM unnest($1::text[], $3::text[]) WITH ORDINALITY AS e(org_id, id, i)
  JOIN mcp_servers m ON m.org_id = e.org_id AND m.id = e.id COLLATE "C"`;

/** New versions, not yet latest; `p` is their `published_at`, `updated_at` and `status_changed_at`. */
const INSERT = `INSERT INTO mcp_servers (${MCP_SERVER_COLUMNS})
  SELECT o, id, v, n, ws, j, st, FALSE, p, p, p, b, b
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
    AS t(o, id, v, n, ws, j, st, p, b)`;

/** Stored versions changed by a re-import: their times move only when something differs. */
const UPDATE_IN_PLACE = `UPDATE mcp_servers m SET server_json = t.j, status = t.st, workspace_id = t.ws,
    created_by = t.b, updated_by = t.b, published_at = coalesce(t.p COLLATE "C", m.published_at),
    updated_at = GREATEST(m.updated_at, $9),
    status_changed_at = CASE WHEN m.status = t.st THEN m.status_changed_at ELSE GREATEST(m.status_changed_at, $9) END
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
    AS t(o, id, v, ws, j, st, p, b)
  WHERE m.org_id = t.o AND m.id = t.id COLLATE "C" AND m.version = t.v COLLATE "C"
    AND (m.server_json IS DISTINCT FROM t.j OR m.status IS DISTINCT FROM t.st OR m.workspace_id IS DISTINCT FROM t.ws
      OR m.created_by IS DISTINCT FROM t.b OR m.published_at IS DISTINCT FROM coalesce(t.p COLLATE "C", m.published_at))`;

/** Every version of a server sits in one workspace: the bundle's. */
const MOVE = `UPDATE mcp_servers m SET workspace_id = t.ws, updated_at = GREATEST(m.updated_at, $5), updated_by = t.b
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS t(o, id, ws, b)
  WHERE m.org_id = t.o AND m.id = t.id COLLATE "C" AND m.workspace_id <> t.ws`;

interface Write {
  e: McpServerEntry;
  name: string;
  version: string;
  publishedAt: string | null;
}

async function writeChunk(c: pg.ClientBase, chunk: readonly Write[], at: string): Promise<void> {
  const orgs = chunk.map((w) => w.e.org_id);
  const stored = await c.query<Neighbour & { i: string }>(NEIGHBOURS, [
    orgs,
    chunk.map((w) => w.name),
    chunk.map((w) => w.e.id),
  ]);
  const neighbours = chunk.map((): Neighbour[] => []);
  for (const r of stored.rows) neighbours[Number(r.i) - 1]?.push(r);
  const updates: Write[] = [];
  const inserts: Write[] = [];
  chunk.forEach((w, i) => {
    (checkImport(w.e, w.name, w.version, neighbours[i] ?? []) ? updates : inserts).push(w);
  });
  const column = (ws: readonly Write[], f: (w: Write) => string | null) => ws.map(f);
  if (inserts.length > 0)
    await c.query(INSERT, [
      column(inserts, (w) => w.e.org_id),
      column(inserts, (w) => w.e.id),
      column(inserts, (w) => w.version),
      column(inserts, (w) => w.name),
      column(inserts, (w) => w.e.workspace_id),
      column(inserts, (w) => JSON.stringify(w.e.server)),
      column(inserts, (w) => w.e.status),
      column(inserts, (w) => w.publishedAt ?? at),
      column(inserts, (w) => w.e.created_by),
    ]);
  if (updates.length > 0)
    await c.query(UPDATE_IN_PLACE, [
      column(updates, (w) => w.e.org_id),
      column(updates, (w) => w.e.id),
      column(updates, (w) => w.version),
      column(updates, (w) => w.e.workspace_id),
      column(updates, (w) => JSON.stringify(w.e.server)),
      column(updates, (w) => w.e.status),
      column(updates, (w) => w.publishedAt),
      column(updates, (w) => w.e.created_by),
      at,
    ]);
  const servers = [...new Map(chunk.map((w) => [JSON.stringify([w.e.org_id, w.e.id]), w])).values()];
  await c.query(MOVE, [
    column(servers, (w) => w.e.org_id),
    column(servers, (w) => w.e.id),
    column(servers, (w) => w.e.workspace_id),
    column(servers, (w) => w.e.created_by),
    at,
  ]);
}

export function mcpServerWrites(c: pg.ClientBase): Pick<BundleWrites<Promise<unknown>>, 'mcpServers'> {
  return {
    mcpServers: async (entries, at) => {
      const writes = entries.map((e): Write => {
        const publishedAt = e.published_at === undefined ? null : storedInstant(e.published_at);
        return { e, ...nameAndVersion(e.server), publishedAt };
      });
      for (let i = 0; i < writes.length; i += CHUNK) await writeChunk(c, writes.slice(i, i + CHUNK), at);
      const names = new Map(
        writes.map((w) => [JSON.stringify([w.e.org_id, w.name]), { org_id: w.e.org_id, name: w.name }]),
      );
      if (names.size > 0) await refreshLatest(c, [...names.values()], at);
    },
  };
}
