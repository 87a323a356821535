/** Row <-> domain mapping shared by the SQL engines. JSON columns hold text; booleans come as 0/1 or true/false. */
import type {
  ArtifactKind,
  ArtifactVersion,
  Identity,
  Membership,
  Organization,
  Project,
  Repo,
  Relationship,
  User,
  Workspace,
} from '../domain/types.ts';
import { apiDocumentJsonOf } from '../shared/api-document.ts';
import { compact } from '../shared/compact.ts';
import { topLevelString } from '../shared/json-member.ts';
import type { ReadyArtifact, ToolAggregateQuery, ToolGroup, ToolRef } from './registry-port.ts';
import { sqlText } from './sql-values.ts';

export type Row = Record<string, unknown>;

/** A nullable text or number column: SQL NULL becomes an absent field. */
const opt = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : (v as string));

export function toOrganization(r: Row): Organization {
  return { id: r.id as string, name: r.name as string, status: r.status as Organization['status'] };
}

export function toUser(r: Row): User {
  return compact({
    id: r.id as string,
    org_id: r.org_id as string,
    name: opt(r.name),
    email: opt(r.email),
    status: r.status as User['status'],
    created_at: r.created_at as string,
    updated_at: r.updated_at as string,
    enrichment: r.enrichment == null ? undefined : (JSON.parse(r.enrichment as string) as User['enrichment']),
  });
}

export function toWorkspace(r: Row): Workspace {
  return compact({
    id: r.id as string,
    org_id: r.org_id as string,
    name: r.name as string,
    display_name: r.display_name as string,
    kind: r.kind as string,
    workspace_status: r.workspace_status as string,
    parent_id: opt(r.parent_id),
    root_workspace_id: r.root_workspace_id as string,
    created_at: r.created_at as string,
    created_by: r.created_by as string,
    updated_at: r.updated_at as string,
    updated_by: r.updated_by as string,
  });
}

export function toMembership(r: Row): Membership {
  return { workspace_id: r.workspace_id as string, user_id: r.user_id as string, role: r.role as Membership['role'] };
}

export function toProject(r: Row): Project {
  return compact({
    id: r.id as string,
    workspace_id: r.workspace_id as string,
    name: r.name as string,
    display_name: r.display_name as string,
    project_status: r.project_status as string,
    knowledge_urls: r.knowledge_urls == null ? undefined : (JSON.parse(r.knowledge_urls as string) as string[]),
    created_at: r.created_at as string,
    created_by: r.created_by as string,
    updated_at: r.updated_at as string,
    updated_by: r.updated_by as string,
  });
}

export function toRepo(r: Row): Repo {
  return compact({
    id: r.id as string,
    workspace_id: r.workspace_id as string,
    name: r.name as string,
    display_name: r.display_name as string,
    source_uri: r.source_uri as string,
    default_branch: opt(r.default_branch),
    created_at: r.created_at as string,
    created_by: r.created_by as string,
    updated_at: r.updated_at as string,
    updated_by: r.updated_by as string,
  });
}

const qualified = (alias: string | undefined) => (column: string) =>
  alias === undefined ? column : `${alias}.${column}`;

/**
 * What `toArtifact` reads (not the ready-to-send text, nor the columns kept for sorting and
 * search), of the table or of its alias.
 */
const ARTIFACT_COLUMN_NAMES = [
  'seq',
  'id',
  'version_ordinal',
  'is_latest',
  'kind',
  'name',
  'display_name',
  'workspace_id',
  'project_id',
  'repo_id',
  'artifact_status',
  'created_at',
  'created_by',
  'updated_at',
  'updated_by',
  'server_id',
  'doc',
] as const;

export function artifactColumns(alias?: string): string {
  return ARTIFACT_COLUMN_NAMES.map(qualified(alias)).join(', ');
}

/** What `toReadyArtifact` reads: the document only for a row without its ready form. */
export function readyArtifactColumns(alias?: string): string {
  const c = qualified(alias);
  const ready = [
    'seq',
    'id',
    'kind',
    'workspace_id',
    'created_by',
    'api_json',
    'relationships_json',
    'relationship_ends',
    'identity_json',
  ]
    .map(c)
    .join(', ');
  return `${ready}, CASE WHEN ${c('api_json')} IS NULL THEN ${c('doc')} END AS doc`;
}

/**
 * Set only while `docMember` reads a row's `doc`: an unparsed row's getter then answers its text
 * instead of parsing it (a private protocol of this module; every other read parses).
 */
let textPlease = false;

/**
 * One top-level member of an artifact's document (`source.doc[key]`): read from the document's
 * text while it is unparsed and the member is a string (shared/json-member.ts), else from `doc`.
 */
export function docMember(source: { doc?: unknown }, key: string): unknown {
  textPlease = true;
  let doc: unknown;
  try {
    doc = source.doc;
  } finally {
    textPlease = false;
  }
  if (typeof doc === 'string') {
    const value = topLevelString(doc, key);
    if (value !== null) return value;
    doc = source.doc;
  }
  return doc !== null && typeof doc === 'object' ? (doc as Record<string, unknown>)[key] : undefined;
}

/**
 * An artifact version from the values of `artifactColumns`, in their order (a row read as an
 * array: no object with a name per value to build, then read, per row). Its document is parsed on
 * first read of `doc` (an own, enumerable getter, so copies and comparisons still see it): a
 * GraphQL list asking for names and edges, or a relationship end, never pays for parsing a
 * kilobyte of JSON it does not show.
 */
export function artifactOfValues(v: readonly unknown[]): ArtifactVersion {
  const text = v[16] as string;
  let doc: Record<string, unknown> | undefined;
  const a: ArtifactVersion = {
    id: v[1] as string,
    version_ordinal: Number(v[2]),
    is_latest: v[3] === true || Number(v[3]) === 1,
    kind: v[4] as ArtifactKind,
    name: v[5] as string,
    workspace_id: v[7] as string,
    artifact_status: v[10] as string,
    created_at: v[11] as string,
    created_by: v[12] as string,
    updated_at: v[13] as string,
    updated_by: v[14] as string,
    get doc() {
      if (doc === undefined && textPlease) return text as unknown as Record<string, unknown>;
      return (doc ??= JSON.parse(text) as Record<string, unknown>);
    },
  };
  const displayName = opt(v[6]);
  if (displayName !== undefined) a.display_name = displayName;
  const projectId = opt(v[8]);
  if (projectId !== undefined) a.project_id = projectId;
  const repoId = opt(v[9]);
  if (repoId !== undefined) a.repo_id = repoId;
  const serverId = opt(v[15]);
  if (serverId !== undefined) a.server_id = serverId;
  return a;
}

/** An artifact version row of `artifactColumns` read as an object (see `artifactOfValues`). */
export function toArtifact(r: Row): ArtifactVersion {
  return artifactOfValues(ARTIFACT_COLUMN_NAMES.map((name) => r[name]));
}

/** Parsed `relationship_ends` lists by their text: pages repeat the same few (frozen, shared by every row). */
const endLists = new Map<string, readonly string[]>();
const MAX_END_LISTS = 1000;

function endWorkspacesOf(text: string): readonly string[] {
  let list = endLists.get(text);
  if (list === undefined) {
    list = Object.freeze(JSON.parse(text) as string[]);
    if (endLists.size >= MAX_END_LISTS) endLists.clear();
    endLists.set(text, list);
  }
  return list;
}

/** A row of `readyArtifactColumns`. */
export function toReadyArtifact(r: Row): ReadyArtifact {
  const kind = r.kind as ArtifactKind;
  const ready: ReadyArtifact = {
    id: r.id as string,
    kind,
    workspace_id: r.workspace_id as string,
    created_by: r.created_by as string,
    api_json: opt(r.api_json) ?? apiDocumentJsonOf(kind, r.doc as string),
  };
  if (r.relationships_json != null) {
    ready.extras = {
      relationships: r.relationships_json as string,
      endWorkspaces: endWorkspacesOf(r.relationship_ends as string),
    };
    if (r.identity_json != null) ready.extras.identity = r.identity_json as string;
  }
  return ready;
}

/** The columns of a relationship, in the order `relationshipOfValues` reads them. */
export const RELATIONSHIP_COLUMN_NAMES = [
  'from_id',
  'from_kind',
  'to_id',
  'to_kind',
  'rel_type',
  'provenance',
  'relationship_status',
  'label',
  'role',
  'weight',
  'confidence',
  'attributes',
] as const;

/** Every column of a relationship, in the order `relationshipOfValues` reads them. */
export const RELATIONSHIP_COLUMNS = RELATIONSHIP_COLUMN_NAMES.join(', ');

/**
 * A relationship from the values of `RELATIONSHIP_COLUMNS`, in their order; optional columns that
 * are NULL are absent (the fields in this order, as `compact` would leave them).
 */
export function relationshipOfValues(v: readonly unknown[]): Relationship {
  const rel: Relationship = {
    from: { id: v[0] as string, kind: v[1] as string },
    to: { id: v[2] as string, kind: v[3] as string },
    rel_type: v[4] as string,
    provenance: v[5] as string,
    relationship_status: v[6] as string,
  };
  if (v[7] != null) rel.label = v[7] as string;
  if (v[8] != null) rel.role = v[8] as string;
  if (v[9] != null) rel.weight = Number(v[9]);
  if (v[10] != null) rel.confidence = Number(v[10]);
  if (v[11] != null) rel.attributes = JSON.parse(v[11] as string) as Record<string, unknown>;
  return rel;
}

/** A relationship row read as an object (see `relationshipOfValues`). */
export function toRelationship(r: Row): Relationship {
  return relationshipOfValues(RELATIONSHIP_COLUMN_NAMES.map((name) => r[name]));
}

export function toIdentity(r: Row): Identity {
  return compact({
    agent_id: r.agent_id as string,
    client_id: r.client_id as string,
    credential_kind: r.credential_kind as Identity['credential_kind'],
    api_key_hash: opt(r.api_key_hash),
    api_key_last4: opt(r.api_key_last4),
    expires_at: opt(r.expires_at),
    revoked: Number(r.revoked) === 1,
  });
}

/** The group key of a tool-aggregate row: one entry per `groupBy` field, null when missing. */
function toolGroupKey(query: ToolAggregateQuery, r: Row): ToolRef['key'] {
  return Object.fromEntries(
    query.groupBy.map((f) => {
      const v = r[`k_${f}`];
      return [f, v === null || v === undefined ? null : f === 'is_system' ? Number(v) === 1 : sqlText(v)];
    }),
  );
}

/** A row of the tool aggregate's page statement. */
export function toToolGroup(query: ToolAggregateQuery, r: Row): ToolGroup {
  return {
    key: toolGroupKey(query, r),
    count: Number(r.count),
    servers: Number(r.servers),
    latest_updated_at: (r.latest_updated_at as string | null) ?? null,
  };
}

/** A row of the tool aggregate's refs statement: a tool, its server and its group. */
export function toToolRef(query: ToolAggregateQuery, r: Row): ToolRef {
  return {
    key: toolGroupKey(query, r),
    tool: sqlText(r.tool),
    server: r.server === null || r.server === undefined ? null : sqlText(r.server),
  };
}
