import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/shared/api-key.ts';
import { BundleError, parseBundle } from '../../src/bundle/parse.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import { demoBundle } from '../../src/seed/demo-bundle.ts';
import { generateProfilePng } from '../../src/shared/png.ts';
import { seedDemoIfEmpty } from '../../src/seed/seed.ts';
import { TEST_API_KEY, smallBundle } from '../fixtures/small-bundle.ts';

type Raw = ReturnType<typeof smallBundle>;

/** The API key of demo agent agent-0005 (documented in src/seed/demo-bundle.ts). */
const DEMO_API_KEY = 'agk_eegwipeJs7BvCibib6uMb15OTLzi0005';

const ws = (b: Raw, i: number) => b.workspaces[i] as { parent_id?: string };
const art = (b: Raw, i: number) => b.artifacts[i] as Record<string, unknown>;

function rejects(mutate: (b: Raw) => void, path: string): void {
  const b = smallBundle();
  mutate(b);
  let caught: unknown;
  try {
    parseBundle(b);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(BundleError);
  expect((caught as BundleError).path).toBe(path);
}

describe('parseBundle', () => {
  it('accepts the fixture, hashing API keys and splitting computed fields off', () => {
    const b = parseBundle(smallBundle());
    expect(JSON.stringify(b)).not.toContain(TEST_API_KEY);
    expect(b.identities.find((i) => i.agent_id === 'ag-2')).toMatchObject({
      credential_kind: 'api_key',
      api_key_last4: TEST_API_KEY.slice(-4),
    });
    expect(b.profile_images.map((i) => [i.agent_id, i.content_type])).toEqual([['ag-1', 'image/png']]);
    for (const a of b.artifacts)
      for (const k of ['identity', 'permissions', 'relationships', 'profile_image_base64'])
        expect(a.doc).not.toHaveProperty(k);
    expect(b.artifacts.find((a) => a.id === 'ag-1' && a.is_latest)?.doc).toMatchObject({
      id: 'ag-1',
      kind: 'agent',
      model_id: 'gpt-4o',
      version_label: 'v2',
      content_hash_hex: expect.any(String),
    });
    expect(b.workspaces[0]).not.toHaveProperty('root_workspace_id');
    expect(b.repos.map((r) => r.id)).toEqual(['repo-a-team', 'repo-a-other', 'repo-b']);
    expect(b.artifacts.find((a) => a.id === 'ag-2')).toMatchObject({
      repo_id: 'repo-a-team',
      doc: { repo_id: 'repo-a-team' },
    });
  });

  it("keeps an artifact's repo_id and drops an exported repo object (the API computes it from the repository)", () => {
    const raw = smallBundle();
    Object.assign(raw.artifacts[2]!, { repo: { id: 'repo-a-team', name: 'stale', source_uri: 'https://old' } });
    const ag2 = parseBundle(raw).artifacts.find((a) => a.id === 'ag-2');
    expect(ag2?.doc.repo_id).toBe('repo-a-team');
    expect(ag2?.doc).not.toHaveProperty('repo');
  });

  it('treats null optional fields as absent and accepts timestamps with offsets', () => {
    const raw = smallBundle();
    Object.assign(raw.artifacts[5]!, {
      display_name: null,
      source_uri: null,
      source_metadata: null,
      commit_ts: '2026-01-01T01:00:00.123+01:00',
    });
    const tool = parseBundle(raw).artifacts[5]!;
    expect(tool).not.toHaveProperty('display_name');
    expect(tool.doc).not.toHaveProperty('display_name');
    expect(tool.doc).not.toHaveProperty('source_uri');
    expect(tool.doc.source_metadata).toBeNull();
    expect(tool.doc.commit_ts).toBe('2026-01-01T01:00:00.123+01:00');
  });

  it('rejects a bundle that is not an object', () => {
    expect(() => parseBundle([])).toThrow(BundleError);
    expect(() => parseBundle({ users: {} })).toThrow('users: must be an array');
  });

  it('says what a value must be, in the words of the field', () => {
    const message = (mutate: (b: Raw) => void) => {
      const b = smallBundle();
      mutate(b);
      try {
        parseBundle(b);
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(message((b) => delete (b.users[0] as Record<string, unknown>).created_at)).toBe(
      'users[0].created_at: must be an RFC 3339 timestamp',
    );
    expect(message((b) => (b.workspaces[0]!.kind = 'galaxy'))).toBe(
      'workspaces[0].kind: must be one of org, team, user_default',
    );
    expect(message((b) => (art(b, 0).content_hash_hex = 'abc'))).toBe(
      'artifacts[0].content_hash_hex: must be 64 hex digits (sha256)',
    );
    expect(message((b) => (art(b, 0).name = ''))).toBe('artifacts[0].name: must be a non-empty string');
    expect(message((b) => (art(b, 0).display_name = null))).toBe('accepted');
  });

  it.each<[string, (b: Raw) => void, string]>([
    [
      'duplicate organization id',
      (b) => {
        b.organizations[1]!.id = 'org-a';
      },
      'organizations[1].id',
    ],
    [
      'bad organization status',
      (b) => {
        b.organizations[0]!.status = 'closed';
      },
      'organizations[0].status',
    ],
    [
      'unknown org of a user',
      (b) => {
        b.users[0]!.org_id = 'org-x';
      },
      'users[0].org_id',
    ],
    [
      'duplicate user id',
      (b) => {
        b.users[1]!.id = 'u-admin';
      },
      'users[1].id',
    ],
    [
      'a timestamp that is not RFC 3339',
      (b) => {
        b.users[0]!.created_at = 'yesterday';
      },
      'users[0].created_at',
    ],
    [
      'enrichment without status',
      (b) => {
        delete (b.users[0]!.enrichment as Record<string, unknown>).enrichment_status;
      },
      'users[0].enrichment.enrichment_status',
    ],
    [
      'unknown parent workspace',
      (b) => {
        ws(b, 1).parent_id = 'ws-x';
      },
      'workspaces[1].parent_id',
    ],
    [
      'a cycle in the tree',
      (b) => {
        ws(b, 0).parent_id = 'ws-a-sub';
      },
      'workspaces[0].parent_id',
    ],
    [
      'a parent in another org',
      (b) => {
        ws(b, 4).parent_id = 'ws-a';
      },
      'workspaces[4].parent_id',
    ],
    [
      'duplicate workspace id',
      (b) => {
        b.workspaces[3]!.id = 'ws-a-team';
      },
      'workspaces[3].id',
    ],
    [
      'bad workspace kind',
      (b) => {
        b.workspaces[1]!.kind = 'galaxy';
      },
      'workspaces[1].kind',
    ],
    [
      'bad role',
      (b) => {
        b.memberships[0]!.role = 'owner';
      },
      'memberships[0].role',
    ],
    [
      'membership of an unknown user',
      (b) => {
        b.memberships[0]!.user_id = 'u-x';
      },
      'memberships[0].user_id',
    ],
    [
      'membership in an unknown workspace',
      (b) => {
        b.memberships[0]!.workspace_id = 'ws-x';
      },
      'memberships[0].workspace_id',
    ],
    [
      'membership across organizations',
      (b) => {
        b.memberships[3]!.user_id = 'u-admin';
      },
      'memberships[3].user_id',
    ],
    [
      'duplicate membership',
      (b) => {
        b.memberships.push({ ...b.memberships[0]!, role: 'viewer' });
      },
      'memberships[4]',
    ],
    [
      'unknown project workspace',
      (b) => {
        b.projects[0]!.workspace_id = 'ws-x';
      },
      'projects[0].workspace_id',
    ],
    [
      'duplicate project id',
      (b) => {
        b.projects.push({ ...b.projects[0]! });
      },
      'projects[1].id',
    ],
    [
      'a knowledge url that is not a string',
      (b) => {
        (b.projects[0]!.knowledge_urls as unknown[])[0] = 42;
      },
      'projects[0].knowledge_urls[0]',
    ],
    [
      'artifact in an unknown workspace',
      (b) => {
        b.artifacts[5]!.workspace_id = 'ws-x';
      },
      'artifacts[5].workspace_id',
    ],
    [
      'artifact in an unknown project',
      (b) => {
        art(b, 2).project_id = 'proj-x';
      },
      'artifacts[2].project_id',
    ],
    [
      'artifact in a project of another org',
      (b) => {
        art(b, 4).project_id = 'proj-a1';
      },
      'artifacts[4].project_id',
    ],
    [
      'unknown repository workspace',
      (b) => {
        b.repos[1]!.workspace_id = 'ws-x';
      },
      'repos[1].workspace_id',
    ],
    [
      'duplicate repository id',
      (b) => {
        b.repos.push({ ...b.repos[0]! });
      },
      'repos[3].id',
    ],
    [
      'a repository without its source uri',
      (b) => {
        delete (b.repos[2] as Partial<(typeof b.repos)[number]>).source_uri;
      },
      'repos[2].source_uri',
    ],
    [
      'artifact from an unknown repository',
      (b) => {
        art(b, 2).repo_id = 'repo-x';
      },
      'artifacts[2].repo_id',
    ],
    [
      'artifact from a repository of another org',
      (b) => {
        art(b, 4).repo_id = 'repo-a-team';
      },
      'artifacts[4].repo_id',
    ],
    [
      'artifact missing a required field',
      (b) => {
        delete art(b, 5).content_hash_hex;
      },
      'artifacts[5].content_hash_hex',
    ],
    [
      'a content hash that is not sha256 hex',
      (b) => {
        art(b, 5).content_hash_hex = 'xyz';
      },
      'artifacts[5].content_hash_hex',
    ],
    [
      'a bad commit timestamp',
      (b) => {
        art(b, 5).commit_ts = '2026-13-45';
      },
      'artifacts[5].commit_ts',
    ],
    [
      'unknown kind',
      (b) => {
        b.artifacts[5]!.kind = 'widget';
      },
      'artifacts[5].kind',
    ],
    [
      'unknown artifact status',
      (b) => {
        art(b, 5).artifact_status = 'gone';
      },
      'artifacts[5].artifact_status',
    ],
    [
      'versions of one id in two kinds',
      (b) => {
        art(b, 0).kind = 'tool';
      },
      'artifacts[1].kind',
    ],
    [
      'a wrongly typed agent field',
      (b) => {
        art(b, 2).max_step_count = '12';
      },
      'artifacts[2].max_step_count',
    ],
    [
      'a wrongly typed tool field',
      (b) => {
        art(b, 5).is_system = 'no';
      },
      'artifacts[5].is_system',
    ],
    [
      'a schema that is not an object',
      (b) => {
        art(b, 5).input_schema = [];
      },
      'artifacts[5].input_schema',
    ],
    [
      'an agent tool without a name',
      (b) => {
        art(b, 2).tools = [{ kind: 'builtin' }];
      },
      'artifacts[2].tools[0].name',
    ],
    [
      'two latest versions',
      (b) => {
        b.artifacts[0]!.is_latest = true;
      },
      'artifacts[1].is_latest',
    ],
    [
      'no latest version',
      (b) => {
        b.artifacts[1]!.is_latest = false;
      },
      'artifacts',
    ],
    [
      'duplicate version',
      (b) => {
        b.artifacts[0]!.version_ordinal = 2;
      },
      'artifacts[1].version_ordinal',
    ],
    [
      'version ordinal zero',
      (b) => {
        b.artifacts[5]!.version_ordinal = 0;
      },
      'artifacts[5].version_ordinal',
    ],
    [
      'an identity on a tool',
      (b) => {
        art(b, 5).identity = { client_id: 'c', credential_kind: 'oidc_client' };
      },
      'artifacts[5].identity',
    ],
    [
      'an api_key identity without a key',
      (b) => {
        delete (art(b, 2).identity as Record<string, unknown>).api_key;
      },
      'artifacts[2].identity.api_key',
    ],
    [
      'a duplicate client id',
      (b) => {
        art(b, 3).identity = { client_id: 'client-ag-1', credential_kind: 'oidc_client' };
      },
      'artifacts[3].identity.client_id',
    ],
    [
      'a profile image that is not an image',
      (b) => {
        art(b, 1).profile_image_base64 = 'bm90IGFuIGltYWdl';
      },
      'artifacts[1].profile_image_base64',
    ],
    [
      'unknown relationship endpoint',
      (b) => {
        b.relationships[0]!.to.id = 'tl-x';
      },
      'relationships[0].to.id',
    ],
    [
      'an endpoint of the wrong kind',
      (b) => {
        b.relationships[0]!.to.kind = 'skill';
      },
      'relationships[0].to.kind',
    ],
    [
      'bad rel_type',
      (b) => {
        b.relationships[0]!.rel_type = 'likes';
      },
      'relationships[0].rel_type',
    ],
    [
      'a weight that is not a number',
      (b) => {
        (b.relationships[0] as Record<string, unknown>).weight = 'heavy';
      },
      'relationships[0].weight',
    ],
    [
      'duplicate relationship',
      (b) => {
        b.relationships.push({ ...b.relationships[0]! });
      },
      'relationships[3]',
    ],
  ])('rejects %s, naming the path', (_name, mutate, path) => rejects(mutate, path));
});

describe('demo bundle', () => {
  it('is deterministic and valid, with the advertised size and ids', () => {
    expect(JSON.stringify(demoBundle())).toBe(JSON.stringify(demoBundle()));
    const b = parseBundle(demoBundle());
    const latest = b.artifacts.filter((a) => a.is_latest);
    const count = (kind: string) => latest.filter((a) => a.kind === kind).length;
    expect(count('agent')).toBe(200);
    expect(count('tool')).toBe(500);
    expect(count('skill')).toBeGreaterThanOrEqual(30);
    expect(count('prompt') + count('document')).toBeGreaterThan(3);
    expect(new Set(latest.filter((a) => a.kind === 'tool').map((a) => a.server_id)).size).toBe(12);
    expect(new Set(latest.filter((a) => a.kind === 'tool').map((a) => a.doc.provider_kind))).toEqual(
      new Set(['mcp', 'builtin', 'openapi']),
    );
    expect(b.organizations.map((o) => [o.id, o.status])).toEqual([
      ['org-acme', 'active'],
      ['org-globex', 'active'],
      ['org-initech', 'active'],
      ['org-umbrella', 'suspended'],
    ]);
    expect(b.users.length).toBe(30);
    expect(b.memberships).toContainEqual({ workspace_id: 'ws-acme', user_id: 'user-alice', role: 'admin' });
    expect(new Set(b.memberships.map((m) => m.role))).toEqual(new Set(['admin', 'editor', 'viewer']));
    expect(new Set(b.workspaces.map((w) => w.kind))).toEqual(new Set(['org', 'team', 'user_default']));
    expect(latest.find((a) => a.id === 'agent-0001')).toMatchObject({
      name: 'Invoice Parser',
      workspace_id: 'ws-acme-platform',
    });
    expect(b.artifacts.some((a) => !a.is_latest)).toBe(true);
    expect(new Set(b.relationships.map((r) => r.rel_type))).toEqual(
      new Set(['uses_tool', 'uses_skill', 'depends_on', 'derived_from', 'references']),
    );
    expect(b.identities.length).toBeGreaterThan(50);
    expect(b.identities.find((i) => i.agent_id === 'agent-0005')?.api_key_hash).toBe(hashApiKey(DEMO_API_KEY));
    expect(b.profile_images.length).toBeGreaterThan(40);
    const parents = new Map(b.workspaces.map((w) => [w.id, w.parent_id]));
    const depth = (id: string | undefined): number => (id === undefined ? -1 : 1 + depth(parents.get(id)));
    expect(Math.max(...b.workspaces.map((w) => depth(w.id)))).toBe(3);
  });

  it('imports into an empty store once, and then the store answers over it', async () => {
    const store = new SqliteRegistryStore(
      path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-demo-')), 'registry.sqlite'),
    );
    try {
      expect(await seedDemoIfEmpty(store)).toBe(true);
      expect(await seedDemoIfEmpty(store)).toBe(false);
      const acme = (await store.listOrgWorkspaces('org-acme')).map((w) => w.id);
      expect(acme).toContain('ws-acme');
      const all = (await Promise.all(['org-acme', 'org-globex', 'org-initech'].map((o) => store.listOrgWorkspaces(o))))
        .flat()
        .map((w) => w.id);
      const agents = await store.findArtifacts({ kind: 'agent', workspaceIds: all, sorts: [], limit: 20, offset: 0 });
      expect(agents.total).toBe(200);
      expect(
        (await store.findArtifacts({ kind: 'tool', workspaceIds: all, sorts: [], limit: 50, offset: 0 })).total,
      ).toBe(500);
      const search = await store.findArtifacts({
        kind: 'agent',
        workspaceIds: acme,
        text: { query: 'invoice', strategy: 'keyword' },
        sorts: [{ field: 'relevance', desc: false }],
        limit: 20,
        offset: 0,
      });
      expect(search.items.length).toBeGreaterThan(0);
      expect(
        search.items.every((a) => `${a.name} ${String(a.doc.instructions)}`.toLowerCase().includes('invoice')),
      ).toBe(true);
      expect((await store.findIdentityByApiKeyHash(hashApiKey(DEMO_API_KEY)))?.agent_id).toBe('agent-0005');
      expect((await store.getProfileImage('agent-0001'))?.content_type).toBe('image/png');
      expect((await store.listUsers('org-acme', 50, 0)).total).toBe(14);
    } finally {
      await store.close();
    }
  });
});

describe('generateProfilePng', () => {
  it('is a deterministic, valid 64x64 PNG that differs between ids', () => {
    const png = Buffer.from(generateProfilePng('agent-0002'));
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([64, 64]);
    expect(png.readUInt32BE(29)).toBe(zlib.crc32(png.subarray(12, 29)) >>> 0);
    expect(Buffer.from(generateProfilePng('agent-0002'))).toEqual(png);
    expect(Buffer.from(generateProfilePng('agent-0003'))).not.toEqual(png);
  });
});

describe('npm run import', () => {
  const run = (file: string, dataDir: string) =>
    spawnSync(process.execPath, ['src/cli/import.ts', file], {
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' },
      encoding: 'utf8',
    });

  it('imports a bundle idempotently and rejects a broken one whole, naming the path', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-import-'));
    const good = path.join(dir, 'good.json');
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(good, JSON.stringify(smallBundle()));
    const broken = smallBundle();
    broken.organizations.push({ id: 'org-new', name: 'New', status: 'active' });
    broken.artifacts[5]!.workspace_id = 'ws-x';
    fs.writeFileSync(bad, JSON.stringify(broken));

    const rejected = run(bad, path.join(dir, 'data'));
    expect(rejected.status).toBe(1);
    expect(rejected.stderr).toContain('artifacts[5].workspace_id: unknown workspace ws-x');
    for (let i = 0; i < 2; i++) {
      const ok = run(good, path.join(dir, 'data'));
      expect(ok.stderr).toBe('');
      expect(ok.status).toBe(0);
      expect(ok.stdout).toContain('2 organizations');
      expect(ok.stdout).toContain('12 artifacts');
    }
    expect(run(bad, path.join(dir, 'data')).status).toBe(1);
    const store = new SqliteRegistryStore(path.join(dir, 'data', 'registry.sqlite'));
    try {
      expect((await store.getOrganizations(['org-a', 'org-b', 'org-new'])).map((o) => o.id)).toEqual([
        'org-a',
        'org-b',
      ]);
      expect((await store.getArtifactVersions(['ag-1'])).length).toBe(2);
    } finally {
      await store.close();
    }
  });
});
