/** SQL helpers both registry engines (sqlite/, postgres/) share: compiled query shape, words, LIKE. */

/** A compiled registry list query: its count and its page, over the same parameters (`P`: what the driver binds). */
export interface CompiledQuery<P = unknown> {
  count: string;
  /**
   * Takes `params`, then LIMIT and OFFSET. For artifacts it selects only `seq` in page order (a
   * covering-index sort); the store then reads the page's rows by `seq`, so the sort never moves
   * whole documents.
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
