/**
 * Validation of an import bundle (DESIGN §11). `parseBundle` either returns a Bundle every engine
 * can write as is, or throws a BundleError naming the first offending JSON path: a bundle that
 * breaks a rule is rejected whole. First the shape (bundle/schema.ts, checked by Ajv in
 * bundle/shape-check.ts), then what needs more than one record: a bundle is self-contained, so every
 * reference (organization, parent workspace, membership, project, repository, artifact
 * workspace/project/repository, relationship endpoint) must name an object of the same bundle (an
 * artifact's project and repository, one of its organization); ids are unique; the workspaces form a
 * tree. The artifacts, their identities and profile images are read by bundle/parse-artifacts.ts,
 * where API keys given in clear are hashed and never kept; the MCP servers (their server.json
 * documents and the rules between entries) by bundle/parse-mcp-servers.ts.
 */
import type {
  ArtifactKind,
  Bundle,
  Enrichment,
  Membership,
  Organization,
  Project,
  Relationship,
  Repo,
  User,
} from '../domain/types.ts';
import { compact } from '../shared/compact.ts';
import { BundleError, opt, ref, uniqueIds } from './checks.ts';
import { parseArtifacts } from './parse-artifacts.ts';
import { parseMcpServers } from './parse-mcp-servers.ts';
import type { RawBundle } from './schema.ts';
import { shapeError, validateShape } from './shape-check.ts';

export { BundleError } from './checks.ts';

function parseUsers(raw: RawBundle, orgIds: Set<string>): User[] {
  const users = (raw.users ?? []).map((u, i): User => {
    ref(orgIds, u.org_id, `users[${i}].org_id`, 'organization');
    return compact({
      id: u.id,
      org_id: u.org_id,
      name: opt(u.name),
      email: opt(u.email),
      status: u.status ?? 'active',
      created_at: u.created_at,
      updated_at: u.updated_at,
      enrichment: opt(u.enrichment) as Enrichment | undefined,
    });
  });
  uniqueIds(users, 'users');
  return users;
}

function parseWorkspaces(raw: RawBundle, orgIds: Set<string>): Bundle['workspaces'] {
  const workspaces = (raw.workspaces ?? []).map((w) =>
    compact({
      id: w.id,
      org_id: w.org_id,
      name: w.name,
      display_name: w.display_name,
      kind: w.kind,
      workspace_status: w.workspace_status,
      parent_id: opt(w.parent_id),
      created_at: w.created_at,
      created_by: w.created_by,
      updated_at: w.updated_at,
      updated_by: w.updated_by,
    }),
  );
  uniqueIds(workspaces, 'workspaces');
  const byId = new Map(workspaces.map((w) => [w.id, w]));
  workspaces.forEach((w, i) => {
    const at = `workspaces[${i}]`;
    ref(orgIds, w.org_id, `${at}.org_id`, 'organization');
    ref(byId, w.parent_id, `${at}.parent_id`, 'workspace');
    if (w.parent_id !== undefined && byId.get(w.parent_id)?.org_id !== w.org_id) {
      throw new BundleError(`${at}.parent_id`, 'parent belongs to another organization');
    }
    const seen = new Set([w.id]);
    for (let p = w.parent_id; p !== undefined; p = byId.get(p)?.parent_id) {
      if (seen.has(p)) throw new BundleError(`${at}.parent_id`, 'the workspace tree has a cycle');
      seen.add(p);
    }
  });
  return workspaces;
}

function parseMemberships(raw: RawBundle, orgOfUser: Map<string, string>, orgOfWorkspace: Map<string, string>) {
  const pairs = new Set<string>();
  return (raw.memberships ?? []).map((m, i): Membership => {
    const at = `memberships[${i}]`;
    ref(orgOfWorkspace, m.workspace_id, `${at}.workspace_id`, 'workspace');
    ref(orgOfUser, m.user_id, `${at}.user_id`, 'user');
    if (orgOfUser.get(m.user_id) !== orgOfWorkspace.get(m.workspace_id)) {
      throw new BundleError(`${at}.user_id`, 'user belongs to another organization than the workspace');
    }
    const pair = JSON.stringify([m.workspace_id, m.user_id]);
    if (pairs.has(pair)) throw new BundleError(at, `duplicate membership of ${m.user_id} in ${m.workspace_id}`);
    pairs.add(pair);
    return { workspace_id: m.workspace_id, user_id: m.user_id, role: m.role };
  });
}

function parseProjects(raw: RawBundle, orgOfWorkspace: Map<string, string>): Project[] {
  const projects = (raw.projects ?? []).map((p, i): Project => {
    ref(orgOfWorkspace, p.workspace_id, `projects[${i}].workspace_id`, 'workspace');
    return compact({
      id: p.id,
      workspace_id: p.workspace_id,
      name: p.name,
      display_name: p.display_name,
      project_status: p.project_status,
      knowledge_urls: opt(p.knowledge_urls),
      created_at: p.created_at,
      created_by: p.created_by,
      updated_at: p.updated_at,
      updated_by: p.updated_by,
    });
  });
  uniqueIds(projects, 'projects');
  return projects;
}

function parseRepos(raw: RawBundle, orgOfWorkspace: Map<string, string>): Repo[] {
  const repos = (raw.repos ?? []).map((r, i): Repo => {
    ref(orgOfWorkspace, r.workspace_id, `repos[${i}].workspace_id`, 'workspace');
    return compact({
      id: r.id,
      workspace_id: r.workspace_id,
      name: r.name,
      display_name: r.display_name,
      source_uri: r.source_uri,
      default_branch: opt(r.default_branch),
      created_at: r.created_at,
      created_by: r.created_by,
      updated_at: r.updated_at,
      updated_by: r.updated_by,
    });
  });
  uniqueIds(repos, 'repos');
  return repos;
}

function parseRelationships(raw: RawBundle, kinds: Map<string, ArtifactKind>): Relationship[] {
  const seen = new Set<string>();
  return (raw.relationships ?? []).map((r, i) => {
    const at = `relationships[${i}]`;
    const end = (key: 'from' | 'to') => {
      const { id, kind } = r[key];
      ref(kinds, id, `${at}.${key}.id`, 'artifact');
      const actual = kinds.get(id);
      if (actual !== kind) throw new BundleError(`${at}.${key}.kind`, `artifact ${id} is a ${actual}, not a ${kind}`);
      return { id, kind: actual };
    };
    const rel: Relationship = compact({
      from: end('from'),
      to: end('to'),
      rel_type: r.rel_type,
      provenance: r.provenance,
      relationship_status: r.relationship_status,
      label: opt(r.label),
      role: opt(r.role),
      weight: opt(r.weight),
      confidence: opt(r.confidence),
      attributes: opt(r.attributes),
    });
    const key = JSON.stringify([rel.from.id, rel.to.id, rel.rel_type]);
    if (seen.has(key)) throw new BundleError(at, `duplicate relationship ${rel.from.id} ${rel.rel_type} ${rel.to.id}`);
    seen.add(key);
    return rel;
  });
}

/** Validates a raw bundle (API field names, DESIGN §11) and returns it in the stores' shape. */
export function parseBundle(input: unknown): Bundle {
  if (!validateShape(input)) {
    const [first] = validateShape.errors ?? [];
    throw first === undefined ? new BundleError('$', 'must be a bundle object') : shapeError(first);
  }
  const raw = input;
  const organizations: Organization[] = (raw.organizations ?? []).map((o) => ({
    id: o.id,
    name: o.name,
    status: o.status,
  }));
  const orgIds = uniqueIds(organizations, 'organizations');
  const users = parseUsers(raw, orgIds);
  const workspaces = parseWorkspaces(raw, orgIds);
  const orgOfWorkspace = new Map(workspaces.map((w) => [w.id, w.org_id]));
  const memberships = parseMemberships(raw, new Map(users.map((u) => [u.id, u.org_id])), orgOfWorkspace);
  const projects = parseProjects(raw, orgOfWorkspace);
  const repos = parseRepos(raw, orgOfWorkspace);
  const parsed = parseArtifacts(raw, {
    orgOfWorkspace,
    projects: new Map(projects.map((p) => [p.id, p])),
    repos: new Map(repos.map((r) => [r.id, r])),
  });
  const relationships = parseRelationships(raw, parsed.kinds);
  return {
    organizations,
    users,
    workspaces,
    memberships,
    projects,
    repos,
    artifacts: parsed.artifacts,
    identities: parsed.identities,
    relationships,
    profile_images: parsed.images,
    mcp_servers: parseMcpServers(raw, orgOfWorkspace),
  };
}
