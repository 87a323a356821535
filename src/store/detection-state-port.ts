/**
 * What insight detection reads and keeps in the registry store beside the insight store's cursor
 * (insight-port.ts `detectionCursor`): the registry agents of an organization, which a step
 * examines before the agents named as sent, and where each of a step's passes over subjects
 * resumes after a step that stopped at its bound (src/insights/detect.ts, docs/insights.md).
 * Positions are bookkeeping: writing them changes no answer, so the registry generation stays.
 */
export interface DetectionState {
  /** The ids of the organization's agents (latest versions, any status), by code point, at most `limit`. */
  agentIds(orgId: string, limit: number): Promise<string[]>;
  /** Where each pass resumes, by pass name: the last subject it examined (empty: every pass from its first). */
  pagePositions(orgId: string): Promise<Record<string, string>>;
  /** Replaces the organization's positions (an empty record forgets them). */
  setPagePositions(orgId: string, positions: Record<string, string>): Promise<void>;
}
