/** First-start seeding: the demo bundle goes into an empty registry, and only then. */
import type { RegistryStore } from '../store/registry-port.ts';
import { parseBundle } from '../store/bundle.ts';
import { demoBundle } from './demo-bundle.ts';
import type { TraceStore } from '../store/trace-port.ts';
import { toolNameOf } from '../tools/tool-usage.ts';
import { demoSpans } from '../traces/demo-traces.ts';

/** Imports the demo bundle when the registry has no organization yet; true when it did. */
export async function seedDemoIfEmpty(store: RegistryStore): Promise<boolean> {
  if (!(await store.isEmpty())) return false;
  await store.importBundle(parseBundle(demoBundle()));
  return true;
}

/**
 * First-start telemetry: `spans` demo spans for the skills of org-acme over the last 30 days,
 * into an empty trace store only.
 */
export async function seedDemoTracesIfEmpty(
  registry: RegistryStore,
  traces: TraceStore,
  spans: number,
  endS = Math.floor(Date.now() / 1000),
): Promise<boolean> {
  if (spans === 0 || (await traces.countSpans()) > 0) return false;
  const workspaces = await registry.listOrgWorkspaces('org-acme');
  const skills = await registry.listArtifacts(
    workspaces.map((w) => w.id),
    'skill',
  );
  if (skills.length === 0) return false;
  const users = (await registry.listUsers('org-acme', 200, 0)).items.map((u) => u.id);
  // Tool calls name the org's own tools, so the tool aggregate's trace metrics have data.
  const tools = (
    await registry.listArtifacts(
      workspaces.map((w) => w.id),
      'tool',
    )
  )
    .slice(0, 40)
    .map((t) => ({ tool: toolNameOf(t), server: t.server_id ?? null }));
  const options = {
    orgId: 'org-acme',
    skills: skills.map((s) => ({ id: s.id, workspaceId: s.workspace_id })),
    users,
    tools,
    spans,
    endS,
    days: 30,
  };
  for (const batch of demoSpans(options)) await traces.insertSpans(batch);
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
