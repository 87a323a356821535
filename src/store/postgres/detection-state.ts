/**
 * Detection's state in the PostgreSQL registry engine (detection-state-port.ts): the organization's
 * agents from `artifacts`, and the positions in `detection_pages` (registry migration 007), which
 * leaves the registry generation as it is (bookkeeping, as `detection_cursors`).
 */
import type { DetectionState } from '../detection-state-port.ts';
import type { Row } from '../sql-rows.ts';
import { sqlText } from '../sql-values.ts';

type Query = (sql: string, params?: unknown[]) => Promise<Row[]>;

export class PostgresDetectionState implements DetectionState {
  private readonly all: Query;

  constructor(all: Query) {
    this.all = all;
  }

  async agentIds(orgId: string, limit: number): Promise<string[]> {
    const rows = await this.all(
      `SELECT a.id FROM artifacts a JOIN workspaces w ON w.id = a.workspace_id
       WHERE a.is_latest AND a.kind = 'agent' AND w.org_id = $1 ORDER BY a.id COLLATE "C" LIMIT $2`,
      [orgId, limit],
    );
    return rows.map((r) => sqlText(r.id));
  }

  async pagePositions(orgId: string): Promise<Record<string, string>> {
    const [row] = await this.all('SELECT positions_json FROM detection_pages WHERE org_id = $1', [orgId]);
    return row === undefined ? {} : (JSON.parse(sqlText(row.positions_json)) as Record<string, string>);
  }

  async setPagePositions(orgId: string, positions: Record<string, string>): Promise<void> {
    if (Object.keys(positions).length === 0) await this.all('DELETE FROM detection_pages WHERE org_id = $1', [orgId]);
    else
      await this.all(
        `INSERT INTO detection_pages (org_id, positions_json) VALUES ($1, $2)
         ON CONFLICT (org_id) DO UPDATE SET positions_json = excluded.positions_json`,
        [orgId, JSON.stringify(positions)],
      );
  }
}
