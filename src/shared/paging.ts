/** Page-size rules of DESIGN §8: defaults, clamping to a maximum, `limit=0` for totals only. */
import { createHash } from 'node:crypto';

export interface Window {
  limit: number;
  offset: number;
}

export function pageWindow(
  limit: number | undefined,
  offset: number | undefined,
  defaultLimit: number,
  maxLimit: number,
): Window {
  return { limit: Math.min(limit ?? defaultLimit, maxLimit), offset: offset ?? 0 };
}

/**
 * Opaque position tokens: base64url of `{o: offset, h: fingerprint, l?: page size}`. The fingerprint
 * binds a cursor to the query that produced it, so a cursor replayed against another query is
 * refused; the page size, when given, is the one the next page keeps unless the client sets another.
 */
export function encodeCursor(offset: number, fingerprint: string, limit?: number): string {
  return Buffer.from(
    JSON.stringify(limit === undefined ? { o: offset, h: fingerprint } : { o: offset, h: fingerprint, l: limit }),
  ).toString('base64url');
}

/** The page size a cursor carries (undefined when none, or when it is not a cursor at all). */
export function cursorLimit(cursor: string): number | undefined {
  try {
    const { l } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { l?: unknown };
    return Number.isSafeInteger(l) && (l as number) >= 0 ? (l as number) : undefined;
  } catch {
    return undefined;
  }
}

/** The offset a cursor points at, or null when it is not one of ours for this query. */
export function decodeCursor(cursor: string, fingerprint: string): number | null {
  if (cursor.length > 512 || !/^[\w-]+$/.test(cursor)) return null;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (parsed === null || typeof parsed !== 'object') return null;
    const { o, h } = parsed as { o?: unknown; h?: unknown };
    if (!Number.isSafeInteger(o) || (o as number) < 0 || h !== fingerprint) return null;
    return o as number;
  } catch {
    return null;
  }
}

export function fingerprint(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 12);
}
