/** SQL helpers both registry engines (sqlite/, postgres/) share: compiled query shape, words, LIKE, columns. */
import type { ToolGroupField } from './registry-port.ts';

/** A compiled registry list query: its count and its page, over the same parameters (`P`: what the driver binds). */
export interface CompiledQuery<P = unknown> {
  count: string;
  /**
   * Takes `params`, then LIMIT and OFFSET. For artifacts the sort never moves whole documents: on
   * SQLite it selects only `seq` in page order (a covering-index sort) and the store reads the
   * page's rows by `seq`; on PostgreSQL one statement sorts `seq`s with the match count as a
   * window (`total_count`) and joins the page's rows, one round trip per page.
   */
  page: string;
  params: P[];
}

/** Full-text words: letters, digits and underscores, lower-cased; at most 32. Null when none. */
export function searchWords(text: string): string[] | null {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu);
  return words === null ? null : words.slice(0, 32);
}

/** A LIKE pattern's literal part, with `\` as the escape character (`ESCAPE '\'`). */
export const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The column of each tool group field (the same in both registry schemas). */
export const TOOL_GROUP_COLUMNS: Record<ToolGroupField, string> = {
  server_id: 'server_id',
  provider_kind: 'provider_kind',
  owner: 'owner',
  workspace_id: 'workspace_id',
  artifact_status: 'artifact_status',
  is_system: 'is_system',
  source_type: 'source_type',
};
