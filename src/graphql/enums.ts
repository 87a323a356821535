/**
 * Enum values: the schema spells them UPPER_CASE, the stores and REST lower-case. Every enum's
 * internal value is its lower-case name (`USES_TOOL` <-> `uses_tool`), so resolvers pass domain
 * values through and arguments arrive as domain values. codegen.ts types them by the same rule.
 */
import { Kind, type DocumentNode } from 'graphql';

/** Enum resolvers mapping every value of every enum in `typeDefs` to its lower-case name. */
export function lowerCaseEnumResolvers(typeDefs: DocumentNode): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const def of typeDefs.definitions) {
    if (def.kind !== Kind.ENUM_TYPE_DEFINITION) continue;
    out[def.name.value] = Object.fromEntries((def.values ?? []).map((v) => [v.name.value, v.name.value.toLowerCase()]));
  }
  return out;
}
