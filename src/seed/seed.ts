/** First-start seeding: the demo bundle goes into an empty registry, and only then. */
import type { ArtifactVersion } from '../domain/types.ts';
import type { RegistryStore } from '../store/registry-port.ts';
import { parseBundle } from '../bundle/parse.ts';
import { demoBundle } from './demo-bundle.ts';
import type { TraceStore } from '../store/trace-port.ts';
import { toolNameOf } from '../tools/tool-usage.ts';
import { demoSpans, type DemoTraceOptions } from './demo-traces.ts';
import { demoInsights } from './demo-insights.ts';

/** Imports the demo bundle when the registry has no organization yet; true when it did. */
export async function seedDemoIfEmpty(store: RegistryStore): Promise<boolean> {
  if (!(await store.isEmpty())) return false;
  await store.importBundle(parseBundle(demoBundle()));
  return true;
}

/**
 * What the demo telemetry records for an organization (org-acme by default): its skills (each in
 * its workspace), its users, tool calls naming 40 of its own tools, so the tool aggregate's trace
 * metrics have data, and its agents with the skills and tools they declare they use (active
 * `uses_skill`, `uses_tool`) and their model. Null when the org has no skill.
 */
export async function demoTraceOptions(
  registry: RegistryStore,
  endS: number,
  days: number,
  orgId = 'org-acme',
): Promise<Omit<DemoTraceOptions, 'spans'> | null> {
  const workspaces = (await registry.listOrgWorkspaces(orgId)).map((w) => w.id);
  const skills = await registry.listArtifacts(workspaces, 'skill');
  if (skills.length === 0) return null;
  const users = (await registry.listUsers(orgId, 200, 0)).items.map((u) => u.id);
  const allTools = await registry.listArtifacts(workspaces, 'tool');
  const toolRef = (t: ArtifactVersion) => ({ tool: toolNameOf(t), server: t.server_id ?? null });
  const toolById = new Map(allTools.map((t) => [t.id, toolRef(t)]));
  const agents = await registry.listArtifacts(workspaces, 'agent');
  const relationships = await registry.getRelationships(agents.map((a) => a.id));
  const declared = (agentId: string, relType: string) =>
    relationships
      .filter((r) => r.from.id === agentId && r.rel_type === relType && r.relationship_status === 'active')
      .map((r) => r.to.id);
  return {
    orgId,
    skills: skills.map((s) => ({ id: s.id, workspaceId: s.workspace_id })),
    users,
    tools: allTools.slice(0, 40).map(toolRef),
    agents: agents.map((a) => ({
      id: a.id,
      skills: declared(a.id, 'uses_skill'),
      model: typeof a.doc.model_id === 'string' ? a.doc.model_id : null,
      tools: declared(a.id, 'uses_tool').flatMap((id) => toolById.get(id) ?? []),
    })),
    endS,
    days,
  };
}

/**
 * First-start telemetry: `spans` demo spans for the skills of org-acme over the last 30 days,
 * into an empty trace store only, and a few insights about its first skills and agent
 * (demo-insights.ts).
 */
export async function seedDemoTracesIfEmpty(
  registry: RegistryStore,
  traces: TraceStore,
  spans: number,
  endS = Math.floor(Date.now() / 1000),
): Promise<boolean> {
  if (spans === 0 || (await traces.countSpans()) > 0) return false;
  const options = await demoTraceOptions(registry, endS, 30);
  if (options === null) return false;
  for (const batch of demoSpans({ ...options, spans })) await traces.insertSpans(batch);
  const agents = await registry.getArtifacts(options.agents?.filter((a) => a.skills.length > 0).map((a) => a.id) ?? []);
  const insights = demoInsights({
    orgId: options.orgId,
    skills: options.skills,
    agents: agents.map((a) => ({ id: a.id, workspaceId: a.workspace_id })).sort((a, b) => (a.id < b.id ? -1 : 1)),
    endS,
  });
  await registry.insights.recordInsights(insights, endS * 1000);
  return true;
}

/**
 * The API keys the demo data set gives its agents: public (they follow from the source), so a
 * production service refuses them even in a store that a development run seeded (DESIGN §12).
 */
export function demoApiKeys(): string[] {
  const keys: string[] = [];
  for (const a of demoBundle().artifacts as { identity?: { api_key?: unknown } }[]) {
    if (typeof a.identity?.api_key === 'string') keys.push(a.identity.api_key);
  }
  return keys;
}
