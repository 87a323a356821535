/**
 * A wide bundle for batching tests and the GraphQL benchmark: the small fixture plus `agents`
 * agents spread over the org-a workspaces, each created by a directory user and using two of
 * `tools` tools and the fixture's skill. Built by cloning fixture rows, so it follows the bundle
 * format wherever the fixture does.
 */
import { smallBundle } from '../fixtures/small-bundle.ts';

type Row = Record<string, unknown>;
const clone = <T>(value: T): T => structuredClone(value);

export function wideBundle(agents: number, tools = 20): Record<string, unknown> {
  const bundle = clone(smallBundle()) as unknown as { artifacts: Row[]; relationships: Row[] } & Record<
    string,
    unknown
  >;
  const latest = (id: string) => bundle.artifacts.find((a) => a.id === id && a.is_latest === true) as Row;
  const agentTemplate = latest('ag-1');
  const toolTemplate = latest('tl-1');
  const useTool = bundle.relationships.find((r) => (r.from as Row).id === 'ag-1' && r.rel_type === 'uses_tool') as Row;
  const useSkill = bundle.relationships.find(
    (r) => (r.from as Row).id === 'ag-1' && r.rel_type === 'uses_skill',
  ) as Row;
  const workspaces = ['ws-a', 'ws-a-team', 'ws-a-sub', 'ws-a-other'];

  for (let i = 0; i < tools; i++) {
    const id = `tl-w${String(i).padStart(4, '0')}`;
    const tool: Row = {
      ...clone(toolTemplate),
      id,
      name: `wide tool ${i}`,
      tool_name: `wide_tool_${i}`,
      workspace_id: workspaces[i % workspaces.length],
    };
    delete tool.project_id;
    bundle.artifacts.push(tool);
  }
  for (let i = 0; i < agents; i++) {
    const id = `ag-w${String(i).padStart(4, '0')}`;
    const agent: Row = {
      ...clone(agentTemplate),
      id,
      name: `wide agent ${i}`,
      display_name: `Wide agent ${i}`,
      version_ordinal: 1,
      workspace_id: workspaces[i % workspaces.length],
      created_by: i % 2 === 0 ? 'u-admin' : 'u-viewer',
    };
    delete agent.identity;
    delete agent.oidc_client_id;
    delete agent.profile_image_base64;
    delete agent.project_id;
    bundle.artifacts.push(agent);
    for (const t of [i % tools, (i + 7) % tools]) {
      bundle.relationships.push({
        ...clone(useTool),
        from: { id, kind: 'agent' },
        to: { id: `tl-w${String(t).padStart(4, '0')}`, kind: 'tool' },
      });
    }
    bundle.relationships.push({ ...clone(useSkill), from: { id, kind: 'agent' } });
  }
  return bundle;
}
