/**
 * Detection's state in the SQLite registry engine (detection-state-port.ts): the organization's
 * agents from `artifacts`, and the positions in `detection_pages` (migration 009), a table without
 * generation triggers (bookkeeping, as `detection_cursors`).
 */
import type { DetectionState } from '../detection-state-port.ts';
import type { Row } from '../sql-rows.ts';
import { sqlText } from '../sql-values.ts';

type Query = (sql: string, ...params: (string | number | null)[]) => Row[];

export class SqliteDetectionState implements DetectionState {
  private readonly all: Query;

  constructor(all: Query) {
    this.all = all;
  }

  async agentIds(orgId: string, limit: number): Promise<string[]> {
    // BINARY collation: ids by the bytes of their UTF-8, which is code point order.
    const rows = this.all(
      `SELECT a.id FROM artifacts a JOIN workspaces w ON w.id = a.workspace_id
       WHERE a.is_latest = 1 AND a.kind = 'agent' AND w.org_id = ? ORDER BY a.id LIMIT ?`,
      orgId,
      limit,
    );
    return rows.map((r) => sqlText(r.id));
  }

  async pagePositions(orgId: string): Promise<Record<string, string>> {
    const [row] = this.all('SELECT positions_json FROM detection_pages WHERE org_id = ?', orgId);
    return row === undefined ? {} : (JSON.parse(sqlText(row.positions_json)) as Record<string, string>);
  }

  async setPagePositions(orgId: string, positions: Record<string, string>): Promise<void> {
    if (Object.keys(positions).length === 0) this.all('DELETE FROM detection_pages WHERE org_id = ?', orgId);
    else
      this.all(
        `INSERT INTO detection_pages (org_id, positions_json) VALUES (?, ?)
         ON CONFLICT (org_id) DO UPDATE SET positions_json = excluded.positions_json`,
        orgId,
        JSON.stringify(positions),
      );
  }
}
