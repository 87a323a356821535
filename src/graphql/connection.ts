/**
 * Relay-style connections over offset pages. The cursor of an edge addresses the position just
 * after it, so `after: endCursor` starts the next page; cursors are bound to the list that issued
 * them (see shared/paging.ts) and a foreign cursor is refused with `invalid_field`.
 */
import { ApiError } from '../errors.ts';
import { decodeCursor, encodeCursor, pageWindow, type Window } from '../shared/paging.ts';

/** The parent of every `…Connection` type. */
export interface Connection<T> {
  edges: { cursor: string; node: T }[];
  nodes: T[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount: number;
}

/** A page of `rows` found at `offset` among `total`, with a cursor per edge. */
export function toConnection<T>(
  rows: T[],
  offset: number,
  total: number,
  cursorAt: (position: number) => string,
): Connection<T> {
  // Cursors cost a hash each: computed only when `edges` or `pageInfo` is selected.
  return {
    get edges() {
      return rows.map((node, i) => ({ cursor: cursorAt(offset + i + 1), node }));
    },
    nodes: rows,
    totalCount: total,
    get pageInfo() {
      return {
        hasNextPage: offset + rows.length < total,
        hasPreviousPage: offset > 0,
        startCursor: rows.length > 0 ? cursorAt(offset + 1) : null,
        endCursor: rows.length > 0 ? cursorAt(offset + rows.length) : null,
      };
    },
  };
}

/** `first` must not be negative (REST's `minimum: 0`). */
export function checkFirst(first: number | null | undefined): number | undefined {
  if (first === null || first === undefined) return undefined;
  if (first < 0) throw new ApiError('invalid_field', 'first must be 0 or more', { field: '/first' });
  return first;
}

/** The page window of `first`/`after` for a list fingerprinted by `list`. */
export function windowOf(
  list: string,
  first: number | null | undefined,
  after: string | null | undefined,
  defaultLimit = 50,
  maxLimit = 200,
): Window {
  let offset: number | undefined;
  if (after !== null && after !== undefined) {
    const decoded = decodeCursor(after, list);
    if (decoded === null)
      throw new ApiError('invalid_field', 'after is not a cursor of this list', { field: '/after' });
    offset = decoded;
  }
  return pageWindow(checkFirst(first), offset, defaultLimit, maxLimit);
}

/** A connection over a list already in memory (children of one parent, loaded in one batch). */
export function sliceConnection<T>(
  list: string,
  all: T[],
  first: number | null | undefined,
  after: string | null | undefined,
): Connection<T> {
  const w = windowOf(list, first, after);
  return toConnection(all.slice(w.offset, w.offset + w.limit), w.offset, all.length, (p) => encodeCursor(p, list));
}

/** A keyset position: the sort key of the last item of a page, which the next page starts after. */
export interface Keyset {
  name: string;
  version: string;
}

/** The cursor of a keyset position in the list fingerprinted by `list`: base64url of `{n, v, h}`. */
function encodeKeyset(key: Keyset, list: string): string {
  return Buffer.from(JSON.stringify({ n: key.name, v: key.version, h: list })).toString('base64url');
}

/** The position of `after` in the list `list`; `invalid_field` when it is not a cursor of that list. */
export function decodeKeyset(after: string, list: string): Keyset {
  const refuse = () => new ApiError('invalid_field', 'after is not a cursor of this list', { field: '/after' });
  if (after.length > 1024 || !/^[\w-]+$/.test(after)) throw refuse();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  const { n, v, h } = (parsed ?? {}) as { n?: unknown; v?: unknown; h?: unknown };
  if (typeof n !== 'string' || typeof v !== 'string' || h !== list) throw refuse();
  return { name: n, version: v };
}

/**
 * A connection over a keyset page: the cursor of an edge is its item's position, so `after:
 * endCursor` starts the next page. Such a list has no total (it would cost a count per page).
 */
export function keysetConnection<T>(
  rows: T[],
  hasMore: boolean,
  afterGiven: boolean,
  keyOf: (row: T) => Keyset,
  list: string,
): Omit<Connection<T>, 'totalCount'> {
  const cursor = (row: T) => encodeKeyset(keyOf(row), list);
  const first = rows[0];
  const last = rows.at(-1);
  return {
    get edges() {
      return rows.map((node) => ({ cursor: cursor(node), node }));
    },
    nodes: rows,
    get pageInfo() {
      return {
        hasNextPage: hasMore,
        hasPreviousPage: afterGiven,
        startCursor: first === undefined ? null : cursor(first),
        endCursor: last === undefined ? null : cursor(last),
      };
    },
  };
}
