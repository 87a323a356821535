/**
 * Drops the keys whose value is undefined, so optional fields are absent rather than present-and-undefined
 * (what `exactOptionalPropertyTypes` asks of every domain object). The type follows: a key whose type admits
 * undefined becomes optional and loses `undefined`.
 */
export type Compact<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

export function compact<T extends object>(o: T): Compact<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as Compact<T>;
}
