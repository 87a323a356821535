/** The demo relationships added after every organization, beyond uses_tool and uses_skill. */

type Obj = Record<string, unknown>;

/**
 * Edges beyond uses_tool/uses_skill: agents depending on and derived from other agents, skills
 * derived from skills, agents referencing the org's policy document; a few marked removed.
 */
export function extraRelationships(org: string, agents: string[], skills: string[], rnd: () => number): Obj[] {
  const out: Obj[] = [];
  const seen = new Set<string>();
  const edge = (from: string, fromKind: string, to: string, toKind: string, relType: string, provenance: string) => {
    const key = `${from}|${to}|${relType}`;
    if (from === to || seen.has(key)) return;
    seen.add(key);
    out.push({
      from: { id: from, kind: fromKind },
      to: { id: to, kind: toKind },
      rel_type: relType,
      provenance,
      relationship_status: rnd() < 0.1 ? 'removed' : 'active',
      confidence: Math.round((0.4 + rnd() * 0.6) * 100) / 100,
    });
  };
  const other = (xs: string[]) => xs[Math.floor(rnd() * xs.length)] as string;
  agents.forEach((id, i) => {
    if (i % 6 === 1) edge(id, 'agent', other(agents), 'agent', 'depends_on', rnd() < 0.5 ? 'declared' : 'observed');
    if (i % 9 === 4) edge(id, 'agent', other(agents), 'agent', 'derived_from', 'declared');
    if (i % 8 === 3) edge(id, 'agent', `doc-${org}-1`, 'document', 'references', 'inferred');
  });
  skills.forEach((id, i) => {
    if (i % 4 === 2) edge(id, 'skill', other(skills), 'skill', 'derived_from', 'inferred');
  });
  return out;
}
