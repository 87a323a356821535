/**
 * The demo data set: a deterministic bundle (seeded PRNG, fixed timestamps, no clock or
 * Math.random) in the raw shape `parseBundle` accepts. Four organizations (one suspended with a
 * single user), 30 users, workspace trees up to three levels below each org root plus a
 * `user_default` workspace per user, 200 agents (some with several versions), 500 tools over 12
 * servers (`mcp`, `builtin`, `openapi`), 39 skills, a few prompts and documents, relationships of
 * every rel_type, identities and stored profile images. Git-sourced artifacts are synced from
 * source repositories: one per team workspace (`repo-acme-platform`) and one shared per org root.
 *
 * Fixed ids the README uses: org `org-acme`, user `user-alice` (admin of root workspace
 * `ws-acme`), agent `agent-0001` ("Invoice Parser" in `ws-acme-platform`, stored profile image).
 * Agent `agent-0005` has an API-key identity whose demo key is
 * `agk_eegwipeJs7BvCibib6uMb15OTLzi0005` (a pinned value in test/store/bundle.test.ts).
 */
import { prng } from '../shared/prng.ts';
import { generateProfilePng } from '../shared/png.ts';

type Obj = Record<string, unknown>;

const BASE = Date.UTC(2026, 0, 5);
const at = (hours: number) => new Date(BASE + hours * 3_600_000).toISOString().replace('.000Z', 'Z');
const pad = (n: number) => String(n).padStart(4, '0');

const ORGS = [
  { id: 'org-acme', name: 'Acme Corp', short: 'acme', users: 14, agents: 110, tools: 280, status: 'active' },
  { id: 'org-globex', name: 'Globex', short: 'globex', users: 9, agents: 55, tools: 140, status: 'active' },
  { id: 'org-initech', name: 'Initech', short: 'initech', users: 6, agents: 35, tools: 80, status: 'active' },
  { id: 'org-umbrella', name: 'Umbrella', short: 'umbrella', users: 1, agents: 0, tools: 0, status: 'suspended' },
];
const FIRST = [
  'alice',
  'bob',
  'carol',
  'dave',
  'erin',
  'frank',
  'grace',
  'heidi',
  'ivan',
  'judy',
  'mallory',
  'niaj',
  'olivia',
  'peggy',
  'rupert',
  'sybil',
  'trent',
  'victor',
  'walter',
  'yvonne',
];
const TEAMS = ['platform', 'finance', 'support', 'growth', 'research'];
const SUBTEAMS = ['automation', 'analytics', 'tooling'];
const SERVERS = [
  'github',
  'jira',
  'slack',
  'gdrive',
  'postgres',
  'salesforce',
  'zendesk',
  'stripe',
  'notion',
  'linear',
  'confluence',
  'datadog',
];
const VERBS = [
  'list',
  'get',
  'create',
  'update',
  'delete',
  'search',
  'sync',
  'export',
  'archive',
  'comment',
  'assign',
  'summarize',
];
const NOUNS = [
  'issue',
  'ticket',
  'message',
  'file',
  'record',
  'invoice',
  'customer',
  'page',
  'dashboard',
  'alert',
  'channel',
  'report',
  'payment',
  'project',
  'document',
];
const ROLES = [
  'Invoice',
  'Travel',
  'Support',
  'Data',
  'Sales',
  'Security',
  'Onboarding',
  'Billing',
  'Research',
  'Incident',
  'Contract',
  'Hiring',
  'Release',
  'Docs',
  'Churn',
];
const JOBS = [
  'Parser',
  'Planner',
  'Assistant',
  'Analyst',
  'Triager',
  'Reviewer',
  'Summarizer',
  'Auditor',
  'Router',
  'Reporter',
];
const SKILLS = [
  'summarize',
  'classify',
  'translate',
  'extract-entities',
  'draft-reply',
  'plan-trip',
  'reconcile',
  'triage',
  'search-docs',
  'score-lead',
  'detect-pii',
  'write-sql',
  'review-code',
];
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4', 'claude-haiku-4', 'gemini-2.5-pro', 'llama-3.3-70b'];
const FRAMEWORKS = ['langgraph', 'crewai', 'autogen', 'openai-agents'];

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
  return { organizations, users, workspaces, memberships, projects, repos, artifacts, relationships };
}

/**
 * The demo repositories (added last and without the PRNG, so every value generated before stays as
 * it was): one per team workspace and one shared per org root, each owned by its workspace's
 * creator. Every artifact with `source_type: git` names the repository of its team (the shared one
 * at the root), so a team's viewer reads its repository while the shared one stays the root's.
 */
function syncFromRepos(workspaces: Obj[], artifacts: Obj[]): Obj[] {
  const parentOf = new Map(workspaces.map((w) => [w.id as string, w.parent_id as string | undefined]));
  const holders = workspaces.filter(
    (w) => w.parent_id === undefined || (w.kind === 'team' && parentOf.get(w.parent_id as string) === undefined),
  );
  const repoOf = new Map<string, string>();
  const repos = holders.map((w, i) => {
    const ws = w.id as string;
    const isRoot = w.parent_id === undefined;
    const name = `${ws.replace(/^ws-/, '')}${isRoot ? '-shared' : ''}`;
    repoOf.set(ws, `repo-${name}`);
    return {
      id: `repo-${name}`,
      workspace_id: ws,
      name,
      display_name: `${w.display_name as string} ${isRoot ? 'shared sources' : 'sources'}`,
      source_uri: `https://git.example.com/${name}.git`,
      default_branch: 'main',
      created_at: at(9_000 + i),
      created_by: w.created_by,
      updated_at: at(9_100 + i),
      updated_by: w.updated_by,
    };
  });
  // The repository of the nearest holder on the path to the root.
  const repoFor = (ws: string | undefined): string | undefined =>
    ws === undefined ? undefined : (repoOf.get(ws) ?? repoFor(parentOf.get(ws)));
  for (const a of artifacts) {
    const repo = a.source_type === 'git' ? repoFor(a.workspace_id as string) : undefined;
    if (repo !== undefined) a.repo_id = repo;
  }
  return repos;
}

/**
 * Edges beyond uses_tool/uses_skill: agents depending on and derived from other agents, skills
 * derived from skills, agents referencing the org's policy document; a few marked removed.
 */
function extraRelationships(org: string, agents: string[], skills: string[], rnd: () => number): Obj[] {
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

function hashHex(s: string): string {
  let h1 = 0x811c9dc5,
    out = '';
  for (let round = 0; round < 8; round++) {
    for (let i = 0; i < s.length; i++) h1 = Math.imul(h1 ^ s.charCodeAt(i) ^ round, 16777619) >>> 0;
    out += h1.toString(16).padStart(8, '0');
  }
  return out;
}

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function demoApiKey(id: string, rnd: () => number): string {
  let key = 'agk_';
  for (let i = 0; i < 32; i++) key += B62.charAt(Math.floor(rnd() * 62));
  return key.slice(0, 4 + 28) + id.slice(-4);
}
