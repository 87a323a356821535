/**
 * An agent's A2A Agent Card: the `AgentCard` message of the A2A protocol v1.0
 * (a2aproject/A2A, specification/a2a.proto at tag v1.0.1) in its JSON form (ProtoJSON: camelCase
 * names, a oneof as its member's name, unset optional fields and empty optional lists left out),
 * built from the registry's agent. Same authorization as every agent read: absent or of another
 * organization 404 not_found, same organization but unreadable 403 access_denied.
 *
 * What comes from where (docs/api.md "Agent cards and the AI catalog"):
 * - `name`: display name, else name; `version`: `version_label`, else the version ordinal;
 * - `description`: the document's `description`, else `metadata.description`, else a sentence naming
 *   the agent and its workspace (the instructions are never shown: they are the agent's internals);
 * - `supportedInterfaces`: `metadata.a2a_url` (an absolute http(s) URL) with
 *   `metadata.a2a_protocol_binding` (default JSONRPC); an agent without one gets the card's own URL
 *   under the binding {@link NO_ENDPOINT_BINDING}, which no A2A client selects, so a client fails
 *   plainly instead of sending messages to the registry;
 * - `skills`: active `uses_skill` relationships to skills the caller can read, by id, at most
 *   {@link CARD_MAX_SKILLS};
 * - `securitySchemes` / `securityRequirements`: bearer credentials, and OpenID Connect discovery
 *   of each configured issuer that is an http(s) URL;
 * - `iconUrl`: an absolute `profile_image_url`, else the agent's profile image (operation 8).
 */
import type { Access } from '../auth/access.ts';
import type { Config } from '../config.ts';
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import { ApiError } from '../errors.ts';

const A2A_PROTOCOL_VERSION = '1.0';
/** The binding of the interface an agent without an A2A endpoint gets: a URI, as custom bindings are (§5.8). */
const NO_ENDPOINT_BINDING = 'urn:agent-registry:no-endpoint';
export const CARD_MAX_SKILLS = 100;
const DEFAULT_MODES = ['text/plain'];
const MAX_TEXT = 4096;
const MAX_TAGS = 20;

interface AgentInterfaceJson {
  url: string;
  protocolBinding: string;
  protocolVersion: string;
}

interface AgentSkillJson {
  id: string;
  name: string;
  description: string;
  tags: string[];
}

type SecuritySchemeJson =
  | { httpAuthSecurityScheme: { scheme: string; bearerFormat: string; description: string } }
  | { openIdConnectSecurityScheme: { openIdConnectUrl: string; description: string } };

/** A `SecurityRequirement`: scheme name to its scopes (a `StringList`, empty here, so `{}`). */
interface SecurityRequirementJson {
  schemes: Record<string, { list?: string[] }>;
}

/** `AgentCard` as JSON; the fields this registry fills. */
export interface AgentCardJson {
  name: string;
  description: string;
  supportedInterfaces: AgentInterfaceJson[];
  version: string;
  /** The registry does not know an agent's runtime capabilities: none is declared. */
  capabilities: Record<string, never>;
  securitySchemes: Record<string, SecuritySchemeJson>;
  securityRequirements: SecurityRequirementJson[];
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkillJson[];
  iconUrl: string;
}

type Doc = Record<string, unknown>;

const textOf = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.slice(0, MAX_TEXT) : undefined;

const metadataOf = (doc: Doc): Doc =>
  typeof doc.metadata === 'object' && doc.metadata !== null && !Array.isArray(doc.metadata)
    ? (doc.metadata as Doc)
    : {};

/** The document's `description`, else its `metadata.description`. */
export function documentDescription(doc: Doc): string | undefined {
  return textOf(doc.description) ?? textOf(metadataOf(doc).description);
}

/** The document's `tags`, else its `metadata.tags`: the non-empty strings, at most 20. */
export function documentTags(doc: Doc): string[] | undefined {
  for (const v of [doc.tags, metadataOf(doc).tags]) {
    if (!Array.isArray(v)) continue;
    const tags = v.map(textOf).filter((t): t is string => t !== undefined);
    if (tags.length > 0) return tags.slice(0, MAX_TAGS);
  }
  return undefined;
}

/** The version label, else the version ordinal. */
export function versionOf(row: ArtifactVersion): string {
  return textOf(row.doc.version_label) ?? String(row.version_ordinal);
}

/** The absolute URL of an agent's card. */
export function agentCardUrl(base: string, agentId: string): string {
  return `${base}/agent/v1/agents/${encodeURIComponent(agentId)}/card`;
}

function httpUrl(v: unknown): string | undefined {
  if (typeof v !== 'string' || v.length > 2048) return undefined;
  try {
    const url = new URL(v);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function interfacesOf(row: ArtifactVersion, base: string): AgentInterfaceJson[] {
  const metadata = metadataOf(row.doc);
  const endpoint = httpUrl(metadata.a2a_url);
  if (endpoint === undefined)
    return [
      { url: agentCardUrl(base, row.id), protocolBinding: NO_ENDPOINT_BINDING, protocolVersion: A2A_PROTOCOL_VERSION },
    ];
  const binding = textOf(metadata.a2a_protocol_binding)?.slice(0, 200) ?? 'JSONRPC';
  return [{ url: endpoint, protocolBinding: binding, protocolVersion: A2A_PROTOCOL_VERSION }];
}

/** The credentials the registry's callers present, as A2A security schemes, and the alternatives a caller may use. */
function securityOf(auth: Config['auth']): Pick<AgentCardJson, 'securitySchemes' | 'securityRequirements'> {
  const securitySchemes: Record<string, SecuritySchemeJson> = {
    bearer: {
      httpAuthSecurityScheme: {
        scheme: 'Bearer',
        bearerFormat: 'JWT or API key',
        description:
          "A JWT of the organization's trusted issuer (user or client-credentials token), or an agent API key",
      },
    },
  };
  const issuers = auth.issuers.filter((iss) => httpUrl(iss) !== undefined);
  issuers.forEach((issuer, i) => {
    securitySchemes[issuers.length === 1 ? 'oidc' : `oidc-${i + 1}`] = {
      openIdConnectSecurityScheme: {
        openIdConnectUrl: `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`,
        description: `Tokens of the trusted issuer ${issuer}, sent as bearer tokens`,
      },
    };
  });
  return {
    securitySchemes,
    securityRequirements: Object.keys(securitySchemes).map((name) => ({ schemes: { [name]: {} } })),
  };
}

function skillOf(row: ArtifactVersion): AgentSkillJson {
  const name = row.display_name ?? row.name;
  return {
    id: row.id,
    name,
    description: documentDescription(row.doc) ?? `The ${name} skill`,
    tags: documentTags(row.doc) ?? [row.name],
  };
}

/** The skills of active `uses_skill` relationships from the agent that the caller can read, by id. */
async function skillsOf(ctx: RequestContext, access: Access, agentId: string): Promise<AgentSkillJson[]> {
  const edges = await ctx.loaders.relationships.load(agentId);
  const ids = new Set<string>();
  for (const e of edges)
    if (e.rel_type === 'uses_skill' && e.relationship_status === 'active' && e.from.id === agentId) ids.add(e.to.id);
  const readable: ArtifactVersion[] = [];
  for (const row of await ctx.loaders.artifact.loadMany([...ids])) {
    if (row instanceof Error) throw row;
    if (row !== null && row.kind === 'skill' && access.canRead(row.workspace_id)) readable.push(row);
  }
  readable.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return readable.slice(0, CARD_MAX_SKILLS).map(skillOf);
}

/** The card of an agent the caller has been found to read (GraphQL resolves it from the loaded row). */
export async function agentCard(ctx: RequestContext, row: ArtifactVersion): Promise<AgentCardJson> {
  const base = ctx.baseUrl();
  const access = await ctx.access();
  const name = row.display_name ?? row.name;
  const workspace = access.workspace(row.workspace_id)?.display_name ?? row.workspace_id;
  const skills = await skillsOf(ctx, access, row.id);
  ctx.checkDeadline();
  return {
    name,
    description: documentDescription(row.doc) ?? `${name}, an agent of the workspace ${workspace}`,
    supportedInterfaces: interfacesOf(row, base),
    version: versionOf(row),
    capabilities: {},
    ...securityOf(ctx.services.config.auth),
    defaultInputModes: DEFAULT_MODES,
    defaultOutputModes: DEFAULT_MODES,
    skills,
    iconUrl:
      httpUrl(row.doc.profile_image_url) ?? `${base}/agent/v1/agents/${encodeURIComponent(row.id)}/profile-image`,
  };
}

/** `GET /agent/v1/agents/{agent_id}/card`. */
export async function getAgentCard(ctx: RequestContext, agentId: string): Promise<AgentCardJson> {
  const row = await ctx.loaders.artifact.load(agentId);
  if (row === null || row.kind !== 'agent') throw new ApiError('not_found', `agent ${agentId} not found`);
  (await ctx.access()).assertReadable(row.workspace_id, 'agent', agentId);
  return agentCard(ctx, row);
}
