/**
 * The `mcp_servers` section of a bundle: MCP server versions, each a `server.json` document
 * (checked against bundle/server-json-schema.ts, stored unchanged) in a workspace of the bundle.
 * Within an organization (the workspace's) an id holds one name, a name one id, and every version
 * of a server sits in one workspace; a version appears once. Errors name the entry's path.
 */
import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { McpServerEntry } from '../domain/types.ts';
import { compact } from '../shared/compact.ts';
import { BundleError, opt, ref } from './checks.ts';
import type { RawBundle } from './schema.ts';
import { serverJsonSchema } from './server-json-schema.ts';

const ajv = new Ajv({ allErrors: false });
addFormats.default(ajv, ['uri']);
const validateServerJson = ajv.compile(serverJsonSchema);

/** The first schema violation of `server` at `at` (`mcp_servers[2].server`), as the path of the value and Ajv's words. */
function serverJsonError(at: string, e: ErrorObject | undefined): BundleError {
  if (e === undefined) return new BundleError(at, 'must be a server.json document');
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : `${acc}.${p}`), at);
  const missing = e.keyword === 'required' ? `.${(e.params as { missingProperty: string }).missingProperty}` : '';
  // `not` guards one value only: a package version "latest".
  const words = { required: 'is required', not: 'must be a specific version, not "latest"' }[e.keyword];
  return new BundleError(path + missing, `${words ?? e.message ?? 'is invalid'} (server.json 2025-12-11)`);
}

interface Seen {
  at: string;
  id: string;
  name: string;
  workspace_id: string;
}

export function parseMcpServers(raw: RawBundle, orgOfWorkspace: ReadonlyMap<string, string>): McpServerEntry[] {
  const byId = new Map<string, Seen>();
  const byName = new Map<string, Seen>();
  const versions = new Set<string>();
  return (raw.mcp_servers ?? []).map((s, i): McpServerEntry => {
    const at = `mcp_servers[${i}]`;
    ref(orgOfWorkspace, s.workspace_id, `${at}.workspace_id`, 'workspace');
    const org = orgOfWorkspace.get(s.workspace_id) as string;
    if (!validateServerJson(s.server)) throw serverJsonError(`${at}.server`, validateServerJson.errors?.[0]);
    const { name, version } = s.server as { name: string; version: string };
    // `latest` names the latest version in the MCP Registry API's paths: no version may take it.
    if (version === '' || version === 'latest')
      throw new BundleError(`${at}.server.version`, 'must be a specific version (not empty, not "latest")');
    const seen: Seen = { at, id: s.id, name, workspace_id: s.workspace_id };
    const sameId = byId.get(JSON.stringify([org, s.id])) ?? seen;
    if (sameId.name !== name)
      throw new BundleError(`${at}.server.name`, `MCP server ${s.id} is named ${sameId.name} in ${sameId.at}`);
    if (sameId.workspace_id !== s.workspace_id)
      throw new BundleError(`${at}.workspace_id`, `MCP server ${s.id} is in ${sameId.workspace_id} in ${sameId.at}`);
    const sameName = byName.get(JSON.stringify([org, name])) ?? seen;
    if (sameName.id !== s.id)
      throw new BundleError(`${at}.server.name`, `${name} is the name of MCP server ${sameName.id} in ${sameName.at}`);
    const key = JSON.stringify([org, s.id, version]);
    if (versions.has(key))
      throw new BundleError(`${at}.server.version`, `duplicate version ${version} of MCP server ${s.id}`);
    versions.add(key);
    byId.set(JSON.stringify([org, s.id]), sameId);
    byName.set(JSON.stringify([org, name]), sameName);
    return compact({
      id: s.id,
      org_id: org,
      workspace_id: s.workspace_id,
      server: s.server,
      status: s.status ?? 'active',
      published_at: opt(s.published_at),
      created_by: s.created_by,
    });
  });
}
