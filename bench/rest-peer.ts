/**
 * The peer of bench:rest's REST reads: what a careful engineer would write for each read without
 * our authorization, relationships and presentation. A bare Fastify app over the same SQLite file
 * (opened read-only through `node:sqlite`, as the registry store does), one prepared statement per
 * request that reads the page (its total as a scalar subquery of the same statement), and the
 * stored documents (`artifacts.doc`, `mcp_servers.server_json`) joined into the answer as text,
 * never parsed. Every caller sees everything (no scope), so its totals count every row.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { DatabaseSync } from 'node:sqlite';

/** The page of latest artifacts of a kind by name, and their count, in one statement. */
const TOOLS = `SELECT a.doc, (SELECT COUNT(*) FROM artifacts WHERE is_latest = 1 AND kind = 'tool') AS total
  FROM (SELECT seq, name_lower, name, id FROM artifacts WHERE is_latest = 1 AND kind = 'tool'
        ORDER BY name_lower, name, id LIMIT ?1 OFFSET ?2) p
  JOIN artifacts a ON a.seq = p.seq ORDER BY p.name_lower, p.name, p.id`;

/** Full-text search over latest agents, ranked as the service ranks (bm25 weights), and the match count. */
const SEARCH = `SELECT a.doc, (SELECT COUNT(*) FROM artifacts_fts f2 JOIN artifacts a2 ON a2.seq = f2.rowid
    WHERE artifacts_fts MATCH ?1 AND a2.is_latest = 1 AND a2.kind = 'agent') AS total
  FROM artifacts_fts f JOIN artifacts a ON a.seq = f.rowid
  WHERE artifacts_fts MATCH ?1 AND a.is_latest = 1 AND a.kind = 'agent'
  ORDER BY bm25(artifacts_fts, 10.0, 5.0, 1.0), a.id LIMIT ?2 OFFSET ?3`;

/** The MCP Registry list: every version of one organization by name and version, with the registry's own metadata. */
const SERVERS = `SELECT server_json, status, published_at, updated_at, is_latest FROM mcp_servers
  WHERE org_id = ? ORDER BY name, version LIMIT ?`;

/** A page of stored JSON documents: `{"items":[…],"page":{…}}` as the service shapes its pages. */
function page(rows: Record<string, unknown>[], limit: number, offset: number): string {
  const total = Number(rows[0]?.total ?? 0);
  return `{"items":[${rows.map((r) => r.doc as string).join(',')}],"page":${JSON.stringify({ limit, offset, total })}}`;
}

/**
 * The peer app over `file` (the gateway's own registry file), listening on loopback; routes
 * `GET /tools?limit&offset`, `POST /agents/search` ({query, limit}), `GET /servers?limit` (org-acme).
 */
export async function startPeer(file: string): Promise<{ url: string; close: () => Promise<void> }> {
  const db = new DatabaseSync(file, { readOnly: true });
  const tools = db.prepare(TOOLS);
  const search = db.prepare(SEARCH);
  const servers = db.prepare(SERVERS);
  const app: FastifyInstance = Fastify({ logger: false });
  const json = 'application/json; charset=utf-8';
  app.get('/tools', async (req, reply) => {
    const q = req.query as { limit?: string; offset?: string };
    const limit = Number(q.limit ?? 50);
    const offset = Number(q.offset ?? 0);
    return reply.type(json).send(page(tools.all(limit, offset), limit, offset));
  });
  app.post('/agents/search', async (req, reply) => {
    const body = req.body as { query: string; limit?: number };
    const limit = body.limit ?? 20;
    const words = body.query.split(/\s+/).filter((w) => w !== '');
    const match = words.map((w) => `"${w.replaceAll('"', '""')}"`).join(' ');
    return reply.type(json).send(page(search.all(match, limit, 0), limit, 0));
  });
  app.get('/servers', async (req, reply) => {
    const limit = Number((req.query as { limit?: string }).limit ?? 100);
    const rows = servers.all('org-acme', limit);
    const items = rows.map(
      (r) =>
        `{"server":${r.server_json as string},"_meta":{"io.modelcontextprotocol.registry/official":${JSON.stringify({
          status: r.status,
          publishedAt: r.published_at,
          updatedAt: r.updated_at,
          isLatest: r.is_latest === 1,
        })}}}`,
    );
    return reply.type(json).send(`{"servers":[${items.join(',')}],"metadata":{"count":${rows.length}}}`);
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    close: async () => {
      await app.close();
      db.close();
    },
  };
}
