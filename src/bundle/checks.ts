/**
 * BundleError and the checks every part of a bundle shares: null read as absent, unique ids, and
 * references that must name an object of the same bundle.
 */

/** A broken bundle rule; `path` is the JSON path of the offending value (`artifacts[12].workspace_id`). */
export class BundleError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = 'BundleError';
    this.path = path;
  }
}

/** Null (allowed for optional fields) reads as absent. */
export const opt = <T>(v: T | null | undefined): T | undefined => v ?? undefined;

export function uniqueIds(items: { id: string }[], key: string): Set<string> {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item.id)) throw new BundleError(`${key}[${i}].id`, `duplicate id ${item.id}`);
    seen.add(item.id);
  });
  return seen;
}

export function ref(
  known: ReadonlySet<string> | ReadonlyMap<string, unknown>,
  id: string | undefined,
  at: string,
  what: string,
): void {
  if (id !== undefined && !known.has(id)) throw new BundleError(at, `unknown ${what} ${id}`);
}
