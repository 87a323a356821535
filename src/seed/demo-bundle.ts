/**
 * The demo data set: a deterministic bundle (seeded PRNG, fixed timestamps, no clock or
 * Math.random) in the raw shape `parseBundle` accepts. Four organizations (one suspended with a
 * single user), 30 users, workspace trees up to three levels below each org root plus a
 * `user_default` workspace per user, 200 agents (some with several versions), 500 tools over 12
 * servers (`mcp`, `builtin`, `openapi`), 39 skills, a few prompts and documents, relationships of
 * every rel_type, identities and stored profile images. Git-sourced artifacts are synced from
 * source repositories: one per team workspace (`repo-acme-platform`) and one shared per org root.
 * Each org with tools has an MCP server per tool server (`mcp-github`, demo-mcp-servers.ts).
 *
 * Fixed ids the README uses: org `org-acme`, user `user-alice` (admin of root workspace
 * `ws-acme`), agent `agent-0001` ("Invoice Parser" in `ws-acme-platform`, stored profile image).
 * Agent `agent-0005` has an API-key identity whose demo key is
 * `agk_eegwipeJs7BvCibib6uMb15OTLzi0005` (a pinned value in test/store/bundle.test.ts).
 */
import { prng } from '../shared/prng.ts';
import { generateProfilePng } from '../shared/png.ts';
import { extraRelationships } from './demo-extra-relationships.ts';
import { syncFromRepos } from './demo-repos.ts';
import { demoMcpServers } from './demo-mcp-servers.ts';
import { at, demoApiKey, hashHex, pad } from './demo-values.ts';
import {
  FIRST,
  FRAMEWORKS,
  JOBS,
  MODELS,
  NOUNS,
  ORGS,
  ROLES,
  SERVERS,
  SKILLS,
  SUBTEAMS,
  TEAMS,
  VERBS,
} from './demo-vocabulary.ts';

type Obj = Record<string, unknown>;

/** The demo bundle, identical on every call (raw shape: pass it through `parseBundle`). */
export function demoBundle(): Obj {
  const rnd = prng(20261122);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const organizations: Obj[] = [],
    users: Obj[] = [],
    workspaces: Obj[] = [],
    memberships: Obj[] = [];
  const projects: Obj[] = [],
    artifacts: Obj[] = [],
    relationships: Obj[] = [];
  const agentsOf = new Map<string, string[]>(),
    skillsOf = new Map<string, string[]>();
  let agentNo = 0,
    toolNo = 0,
    skillNo = 0,
    clock = 0;
  const stamp = (by: string) => {
    clock += 1;
    const created = at(clock);
    return { created_at: created, created_by: by, updated_at: at(clock + Math.floor(rnd() * 500)), updated_by: by };
  };
  const common = (id: string, kind: string, name: string, ws: string, by: string, extension: string) => ({
    id,
    kind,
    name,
    display_name: name,
    artifact_status: rnd() < 0.9 ? 'active' : pick(['draft', 'deprecated']),
    source_type: pick(['git', 'upload', 'registry']),
    extension,
    content_hash_hex: hashHex(`${id}:${name}`),
    commit_ts: at(clock),
    version_ordinal: 1,
    is_latest: true,
    workspace_id: ws,
    ...stamp(by),
    source_uri: `https://git.example.com/${ws}/${id}`,
    source_version: `v${1 + Math.floor(rnd() * 5)}.0.0`,
  });

  for (const org of ORGS) {
    organizations.push({ id: org.id, name: org.name, status: org.status });
    const root = `ws-${org.short}`;
    const orgUsers = Array.from(
      { length: org.users },
      (_, i) => `user-${FIRST[i] as string}${org.id === 'org-acme' ? '' : `-${org.short}`}`,
    );
    orgUsers.forEach((id, i) => {
      const first = id.replace(/^user-/, '').split('-')[0] as string;
      const name = `${first.charAt(0).toUpperCase()}${first.slice(1)} ${org.name.split(' ')[0] ?? ''}`;
      const user: Obj = {
        id,
        org_id: org.id,
        name,
        email: `${first}@${org.short}.example.com`,
        created_at: at(i),
        updated_at: at(i + 100),
      };
      if (i % 3 === 0)
        user.enrichment = {
          enrichment_status: 'enriched',
          provider: 'directory',
          enriched_at: at(i + 200),
          profile: {
            full_name: name,
            title: pick(['Engineer', 'Product manager', 'Analyst', 'Team lead']),
            department: pick(TEAMS),
            company: org.name,
          },
        };
      else if (i % 3 === 1) user.enrichment = { enrichment_status: 'pending' };
      users.push(user);
    });
    const admin = orgUsers[0] as string;
    workspaces.push({
      id: root,
      org_id: org.id,
      name: org.short,
      display_name: org.name,
      kind: 'org',
      workspace_status: 'active',
      ...stamp(admin),
    });
    memberships.push({ workspace_id: root, user_id: admin, role: 'admin' });
    const containers: string[] = [root];
    for (const team of TEAMS.slice(0, org.users > 5 ? 4 : 2)) {
      const tid = `${root}-${team}`;
      workspaces.push({
        id: tid,
        org_id: org.id,
        parent_id: root,
        name: team,
        display_name: `${team[0]?.toUpperCase()}${team.slice(1)}`,
        kind: 'team',
        workspace_status: 'active',
        ...stamp(admin),
      });
      containers.push(tid);
      for (const sub of SUBTEAMS.slice(0, 1 + Math.floor(rnd() * 2))) {
        const sid = `${tid}-${sub}`;
        workspaces.push({
          id: sid,
          org_id: org.id,
          parent_id: tid,
          name: sub,
          display_name: `${team} ${sub}`,
          kind: 'team',
          workspace_status: 'active',
          ...stamp(admin),
        });
        containers.push(sid);
      }
      for (let p = 0; p < 2; p++) {
        projects.push({
          id: `proj-${org.short}-${team}-${p + 1}`,
          workspace_id: tid,
          name: `${team}-${p + 1}`,
          display_name: `${team} project ${p + 1}`,
          project_status: 'active',
          knowledge_urls: [`https://wiki.${org.short}.example.com/${team}/${p + 1}`],
          ...stamp(admin),
        });
      }
    }
    orgUsers.forEach((u, i) => {
      const own = `ws-home-${u.replace(/^user-/, '')}`;
      workspaces.push({
        id: own,
        org_id: org.id,
        parent_id: root,
        name: `home-${u}`,
        display_name: `${u} (personal)`,
        kind: 'user_default',
        workspace_status: 'active',
        ...stamp(u),
      });
      memberships.push({ workspace_id: own, user_id: u, role: 'admin' });
      if (i > 0)
        memberships.push({
          workspace_id: containers[1 + (i % (containers.length - 1))],
          user_id: u,
          role: i % 2 === 0 ? 'editor' : 'viewer',
        });
    });
    const teamSpaces = containers.slice(1);
    const projectsOf = (ws: string) => projects.filter((p) => p.workspace_id === ws).map((p) => p.id as string);

    const orgTools: string[] = [];
    for (let t = 0; t < org.tools; t++) {
      toolNo++;
      const server = SERVERS[(t * 7 + org.short.length) % SERVERS.length] as string;
      const toolName = `${pick(VERBS)}_${pick(NOUNS)}`;
      const id = `tool-${pad(toolNo)}`;
      orgTools.push(id);
      artifacts.push({
        ...common(id, 'tool', `${server}.${toolName}`, pick(teamSpaces), pick(orgUsers), 'json'),
        display_name: `${toolName.replace('_', ' ')} (${server})`,
        server_id: `mcp-${server}`,
        tool_name: toolName,
        provider_kind: t % 10 === 0 ? 'builtin' : t % 10 === 5 ? 'openapi' : 'mcp',
        owner: `${pick(TEAMS)}-team`,
        is_system: t % 13 === 0,
        input_schema: {
          type: 'object',
          properties: { [pick(NOUNS)]: { type: 'string' }, limit: { type: 'integer', minimum: 1 } },
          required: [],
        },
        output_schema: { type: 'object', properties: { items: { type: 'array' } } },
        permissions: { invocable: true },
      });
    }
    const orgSkills: string[] = [];
    for (const name of org.agents > 0 ? SKILLS : []) {
      skillNo++;
      const id = `skill-${pad(skillNo)}`;
      orgSkills.push(id);
      artifacts.push({
        ...common(id, 'skill', name, pick(teamSpaces), pick(orgUsers), 'md'),
        display_name: name.replace('-', ' '),
      });
    }
    skillsOf.set(org.id, orgSkills);
    agentsOf.set(org.id, []);
    for (let a = 0; a < org.agents; a++) {
      agentNo++;
      const id = `agent-${pad(agentNo)}`;
      agentsOf.get(org.id)?.push(id);
      const ws = agentNo === 1 ? `${root}-platform` : pick(teamSpaces);
      const name = agentNo === 1 ? 'Invoice Parser' : `${pick(ROLES)} ${pick(JOBS)}`;
      const owner = pick(orgUsers);
      const role = name.split(' ')[0]?.toLowerCase() ?? 'work';
      const instructions = `You are the ${name}. Help the ${pick(TEAMS)} team with ${role} work: ${pick(VERBS)} ${pick(NOUNS)}s, ${pick(VERBS)} each ${pick(NOUNS)} and report ${pick(NOUNS)} status. Escalate anything unclear.`;
      const versions = rnd() < 0.3 ? 2 + Math.floor(rnd() * 2) : 1;
      const projectChoices = projectsOf(ws);
      const base: Obj = {
        ...common(id, 'agent', name, ws, owner, 'yaml'),
        agent_framework_id: pick(FRAMEWORKS),
        agent_provider_id: pick(['openai', 'anthropic', 'google', 'meta']),
        is_system: a % 17 === 0,
        max_step_count: 5 + Math.floor(rnd() * 20),
        model_id: pick(MODELS),
        tools: [{ kind: 'builtin', name: pick(['web_search', 'code_interpreter', 'file_search']) }],
        permissions: { invocable: true },
        profile_image_url: `/agent/v1/agents/${id}/profile-image`,
        owner_id: owner,
        ...(projectChoices.length > 0 && rnd() < 0.6 ? { project_id: pick(projectChoices) } : {}),
      };
      for (let v = 1; v <= versions; v++) {
        const version: Obj = {
          ...base,
          version_ordinal: v,
          is_latest: v === versions,
          version_label: `v${v}`,
          instructions: v === versions ? instructions : `${instructions} (draft ${v})`,
        };
        if (v === versions) {
          if (agentNo % 3 === 0) version.identity = { client_id: `client-${id}`, credential_kind: 'oidc_client' };
          else if (agentNo % 5 === 0)
            version.identity = {
              client_id: `key-${id}`,
              credential_kind: 'api_key',
              api_key: demoApiKey(id, rnd),
              expires_at: '2027-12-31T00:00:00Z',
            };
          if (agentNo % 4 === 1)
            version.profile_image_base64 = Buffer.from(generateProfilePng(`${id}:stored`)).toString('base64');
        }
        artifacts.push(version);
      }
      const used = new Set<string>();
      for (let k = 0; k < 2 + Math.floor(rnd() * 4); k++) used.add(pick(orgTools));
      for (const tool of used)
        relationships.push({
          from: { id, kind: 'agent' },
          to: { id: tool, kind: 'tool' },
          rel_type: 'uses_tool',
          provenance: pick(['declared', 'declared', 'inferred', 'observed']),
          relationship_status: 'active',
          weight: Math.round(rnd() * 100) / 100,
        });
      relationships.push({
        from: { id, kind: 'agent' },
        to: { id: pick(orgSkills), kind: 'skill' },
        rel_type: 'uses_skill',
        provenance: pick(['declared', 'observed']),
        relationship_status: 'active',
        confidence: Math.round((0.5 + rnd() / 2) * 100) / 100,
      });
    }
    if (org.agents > 0) {
      artifacts.push({ ...common(`prompt-${org.short}-1`, 'prompt', 'Support reply tone', root, admin, 'md') });
      artifacts.push({
        ...common(`doc-${org.short}-1`, 'document', 'Agent usage policy', root, admin, 'pdf'),
        metadata: { pages: 4 },
      });
    }
  }
  // Added after every org so that the values generated above stay as they were.
  for (const org of ORGS.filter((o) => o.agents > 0)) {
    const root = `ws-${org.short}`;
    const admin = (users.find((u) => u.org_id === org.id) as Obj).id as string;
    const bots = `${root}-platform-automation-bots`;
    workspaces.push({
      id: bots,
      org_id: org.id,
      parent_id: `${root}-platform-automation`,
      name: 'bots',
      display_name: 'platform automation bots',
      kind: 'team',
      workspace_status: 'active',
      ...stamp(admin),
    });
    projects.push({
      id: `proj-${org.short}-bots-1`,
      workspace_id: bots,
      name: 'bots-1',
      display_name: 'bots project 1',
      project_status: 'active',
      knowledge_urls: [`https://wiki.${org.short}.example.com/bots`],
      ...stamp(admin),
    });
    artifacts.push({
      ...common(`prompt-${org.short}-2`, 'prompt', 'Bot escalation template', bots, admin, 'md'),
      project_id: `proj-${org.short}-bots-1`,
    });
    relationships.push(...extraRelationships(org.short, agentsOf.get(org.id) ?? [], skillsOf.get(org.id) ?? [], rnd));
  }
  const repos = syncFromRepos(workspaces, artifacts);
  const mcp_servers = ORGS.filter((o) => o.tools > 0).flatMap((org) =>
    demoMcpServers(org, (users.find((u) => u.org_id === org.id) as Obj).id as string),
  );
  return { organizations, users, workspaces, memberships, projects, repos, artifacts, relationships, mcp_servers };
}
