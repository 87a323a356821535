/**
 * The demo MCP servers: for every organization with tools, one server per name of SERVERS, with
 * the id its tools give as `server_id` (`mcp-github`), which is also what the demo telemetry
 * records as `mcp.server.name`. Each version is a server.json document (MCP Registry
 * server.schema.json 2025-12-11) with packages (npm, PyPI or OCI, run over stdio) and/or remotes
 * (streamable HTTP), a repository and a website; some servers have several versions, and one
 * older version is deprecated. Deterministic: no clock, no random numbers.
 */
import { SERVER_JSON_SCHEMA_URI } from '../bundle/server-json-schema.ts';
import { at } from './demo-values.ts';

type Obj = Record<string, unknown>;

interface Spec {
  title: string;
  description: string;
  /** Where it is published: the team workspace of the org that runs it. */
  team: 'platform' | 'finance' | 'support';
  package?: 'npm' | 'pypi' | 'oci';
  remote?: boolean;
  /** Secrets and settings the package reads from its environment. */
  env: string[];
  /** Oldest first; the last one is the latest. */
  versions: string[];
  /** A version published, then deprecated. */
  deprecated?: string;
  /** The remote URL names the customer's instance (a URL template variable). */
  instanceVariable?: boolean;
}

const CATALOG: Record<string, Spec> = {
  github: {
    title: 'GitHub',
    description: 'Issues, pull requests, code search and repository files on GitHub',
    team: 'platform',
    package: 'npm',
    remote: true,
    env: ['GITHUB_TOKEN'],
    versions: ['1.4.0', '1.5.0', '1.6.2'],
  },
  jira: {
    title: 'Jira',
    description: 'Search, create and update Jira issues and sprints',
    team: 'platform',
    remote: true,
    env: [],
    versions: ['2.0.0', '2.1.0'],
    instanceVariable: true,
  },
  slack: {
    title: 'Slack',
    description: 'Read channels and threads, post messages and reactions in Slack',
    team: 'platform',
    package: 'npm',
    env: ['SLACK_BOT_TOKEN', 'SLACK_TEAM_ID'],
    versions: ['0.9.0', '1.0.0'],
  },
  gdrive: {
    title: 'Google Drive',
    description: 'Search and read files and folders in Google Drive',
    team: 'platform',
    package: 'pypi',
    env: ['GOOGLE_APPLICATION_CREDENTIALS'],
    versions: ['0.3.1'],
  },
  postgres: {
    title: 'PostgreSQL',
    description: 'Read-only SQL queries and schema inspection on a PostgreSQL database',
    team: 'platform',
    package: 'oci',
    env: ['DATABASE_URL'],
    versions: ['1.1.0', '1.2.0'],
    deprecated: '1.1.0',
  },
  salesforce: {
    title: 'Salesforce',
    description: 'Accounts, opportunities and SOQL queries on a Salesforce org',
    team: 'finance',
    remote: true,
    env: [],
    versions: ['3.0.0'],
    instanceVariable: true,
  },
  zendesk: {
    title: 'Zendesk',
    description: 'Tickets, users and help center articles in Zendesk',
    team: 'support',
    package: 'pypi',
    env: ['ZENDESK_SUBDOMAIN', 'ZENDESK_API_TOKEN'],
    versions: ['0.5.0', '0.6.0'],
  },
  stripe: {
    title: 'Stripe',
    description: 'Customers, invoices, payments and refunds in Stripe',
    team: 'finance',
    package: 'npm',
    remote: true,
    env: ['STRIPE_SECRET_KEY'],
    versions: ['2.2.0'],
  },
  notion: {
    title: 'Notion',
    description: 'Search, read and edit Notion pages and databases',
    team: 'platform',
    package: 'npm',
    env: ['NOTION_TOKEN'],
    versions: ['1.0.3'],
  },
  linear: {
    title: 'Linear',
    description: 'Issues, projects and cycles in Linear',
    team: 'platform',
    remote: true,
    env: [],
    versions: ['1.1.0'],
  },
  confluence: {
    title: 'Confluence',
    description: 'Search and read Confluence spaces and pages',
    team: 'platform',
    package: 'oci',
    env: ['CONFLUENCE_URL', 'CONFLUENCE_API_TOKEN'],
    versions: ['0.8.0'],
  },
  datadog: {
    title: 'Datadog',
    description: 'Metrics, monitors, logs and incidents in Datadog',
    team: 'platform',
    package: 'pypi',
    remote: true,
    env: ['DD_API_KEY', 'DD_APP_KEY'],
    versions: ['1.3.0', '1.3.1'],
  },
};

const secret = (name: string) => /TOKEN|KEY|CREDENTIALS|URL/.test(name);

function packageOf(kind: 'npm' | 'pypi' | 'oci', org: string, server: string, version: string, env: string[]): Obj {
  const environmentVariables = env.map((name) => ({
    name,
    description: `${name} for the ${server} server`,
    isRequired: true,
    isSecret: secret(name),
    ...(name.endsWith('CREDENTIALS') ? { format: 'filepath' } : {}),
  }));
  const transport = { type: 'stdio' };
  switch (kind) {
    case 'npm':
      return {
        registryType: 'npm',
        registryBaseUrl: 'https://registry.npmjs.org',
        identifier: `@${org}-mcp/${server}-server`,
        version,
        runtimeHint: 'npx',
        transport,
        environmentVariables,
      };
    case 'pypi':
      return {
        registryType: 'pypi',
        identifier: `${org}-mcp-${server}`,
        version,
        runtimeHint: 'uvx',
        transport,
        environmentVariables,
      };
    case 'oci':
      return {
        registryType: 'oci',
        identifier: `ghcr.io/${org}-example/mcp-${server}:${version}`,
        runtimeHint: 'docker',
        runtimeArguments: [
          { type: 'named', name: '--rm' },
          { type: 'named', name: '-i' },
          ...env.map((name) => ({ type: 'named', name: '-e', value: name, isRepeated: true })),
        ],
        transport,
        environmentVariables,
      };
  }
}

function remoteOf(org: string, server: string, spec: Spec): Obj {
  const token = { description: `A ${spec.title} API token`, isRequired: true, isSecret: true };
  const headers = [{ name: 'Authorization', value: 'Bearer {token}', isRequired: true, variables: { token } }];
  if (spec.instanceVariable === true)
    return {
      type: 'streamable-http',
      url: `https://{instance}.${server}.example.com/mcp`,
      headers,
      variables: { instance: { description: `Your ${spec.title} site name`, isRequired: true } },
    };
  return { type: 'streamable-http', url: `https://mcp.${org}.example.com/${server}/mcp`, headers };
}

/** The demo's MCP server versions of one organization (raw bundle entries). */
export function demoMcpServers(org: { short: string }, admin: string): Obj[] {
  const entries: Obj[] = [];
  Object.entries(CATALOG).forEach(([server, spec], s) => {
    spec.versions.forEach((version, v) => {
      const remote = spec.remote === true ? { remotes: [remoteOf(org.short, server, spec)] } : {};
      const pkg =
        spec.package === undefined ? {} : { packages: [packageOf(spec.package, org.short, server, version, spec.env)] };
      entries.push({
        id: `mcp-${server}`,
        workspace_id: `ws-${org.short}-${spec.team}`,
        server: {
          $schema: SERVER_JSON_SCHEMA_URI,
          name: `com.example.${org.short}/${server}`,
          title: spec.title,
          description: spec.description,
          version,
          websiteUrl: `https://docs.${org.short}.example.com/mcp/${server}`,
          repository: { url: `https://github.com/${org.short}-example/mcp-${server}`, source: 'github' },
          ...(s % 3 === 0
            ? { icons: [{ src: `https://static.${org.short}.example.com/icons/${server}.png`, mimeType: 'image/png' }] }
            : {}),
          ...pkg,
          ...remote,
        },
        status: version === spec.deprecated ? 'deprecated' : 'active',
        // Versions a month apart, the latest a few days before the demo's tools were made.
        published_at: at(-24 * (30 * (spec.versions.length - 1 - v) + 3) - s),
        created_by: admin,
      });
    });
  });
  return entries;
}
