/**
 * Text as the stores keep it. JSON.parse keeps a lone UTF-16 surrogate that a `\u` escape names
 * (`"\ud800"`), but DuckDB, SQLite and PostgreSQL hold UTF-8, where it becomes U+FFFD: text compared
 * or hashed as parsed would then differ from the same text read back. So telemetry text is made well
 * formed where it is parsed (otlp/json-body.ts, Claude Code's `tool_parameters`), and compared in
 * that form where a store keeps it (agent names, DuckDB's dictionary and KnownValues).
 */

/** `s` with each lone surrogate replaced by U+FFFD (`s` itself when it has none, the common case). */
export const wellFormed = (s: string): string => (s.isWellFormed() ? s : s.toWellFormed());

/**
 * `value` (as JSON.parse answers) with every string in it well formed, member names included: in
 * place, without recursion (no nesting is too deep for it). A member renamed keeps its value and
 * moves last; `__proto__` stays an own member, as JSON.parse makes it.
 */
export function wellFormedDeep(value: unknown): unknown {
  if (typeof value === 'string') return wellFormed(value);
  const stack: unknown[] = [value];
  for (let at = stack.pop(); at !== undefined; at = stack.pop()) {
    if (at === null || typeof at !== 'object') continue;
    if (Array.isArray(at)) {
      const list = at as unknown[];
      for (let i = 0; i < list.length; i++) {
        const v = list[i];
        if (typeof v === 'string') list[i] = wellFormed(v);
        else if (typeof v === 'object') stack.push(v);
      }
      continue;
    }
    const members = at as Record<string, unknown>;
    for (const name of Object.keys(members)) {
      const v = members[name];
      const fixed = typeof v === 'string' ? wellFormed(v) : v;
      if (typeof v === 'object') stack.push(v);
      const key = wellFormed(name);
      if (key !== name) Reflect.deleteProperty(members, name);
      if (key !== name || fixed !== v)
        Object.defineProperty(members, key, { value: fixed, writable: true, enumerable: true, configurable: true });
    }
  }
  return value;
}

/** A `\u` escape of a surrogate (D800 to DFFF), lone or half of a pair. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** JSON.parse of telemetry text (a JSON-valued attribute), its strings well formed; throws as JSON.parse. */
export function parseWellFormedJson(text: string): unknown {
  const parsed: unknown = JSON.parse(text);
  return SURROGATE_ESCAPE.test(text) ? wellFormedDeep(parsed) : parsed;
}
