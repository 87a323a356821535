import { describe, expect, it } from 'vitest';
import { BundleError, parseBundle } from '../../src/store/bundle.ts';
import { demoBundle } from '../../src/seed/demo-bundle.ts';
import { TEST_API_KEY, smallBundle } from '../fixtures/small-bundle.ts';

type Raw = ReturnType<typeof smallBundle>;

const ws = (b: Raw, i: number) => b.workspaces[i] as { parent_id?: string };

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
    expect(b.identities.find((i) => i.agent_id === 'ag-2')).toMatchObject({ credential_kind: 'api_key', api_key_last4: TEST_API_KEY.slice(-4) });
    expect(b.profile_images.map((i) => [i.agent_id, i.content_type])).toEqual([['ag-1', 'image/png']]);
    for (const a of b.artifacts) for (const k of ['identity', 'permissions', 'relationships', 'profile_image_base64']) expect(a.doc).not.toHaveProperty(k === 'permissions' ? '__none__' : k);
  });

  it('rejects a bundle that is not an object', () => {
    expect(() => parseBundle([])).toThrow(BundleError);
    expect(() => parseBundle({ users: {} })).toThrow('users: must be an array');
  });

  it.each<[string, (b: Raw) => void, string]>([
    ['unknown org of a user', (b) => { b.users[0]!.org_id = 'org-x'; }, 'users[0].org_id'],
    ['duplicate user id', (b) => { b.users[1]!.id = 'u-admin'; }, 'users[1].id'],
    ['unknown parent workspace', (b) => { ws(b, 1).parent_id = 'ws-x'; }, 'workspaces[1].parent_id'],
    ['a cycle in the tree', (b) => { ws(b, 0).parent_id = 'ws-a-sub'; }, 'workspaces[0].parent_id'],
    ['a parent in another org', (b) => { ws(b, 4).parent_id = 'ws-a'; }, 'workspaces[4].parent_id'],
    ['bad role', (b) => { b.memberships[0]!.role = 'owner'; }, 'memberships[0].role'],
    ['unknown project workspace', (b) => { b.projects[0]!.workspace_id = 'ws-x'; }, 'projects[0].workspace_id'],
    ['artifact in an unknown workspace', (b) => { b.artifacts[5]!.workspace_id = 'ws-x'; }, 'artifacts[5].workspace_id'],
    ['artifact missing a required field', (b) => { delete (b.artifacts[5] as Record<string, unknown>).content_hash_hex; }, 'artifacts[5].content_hash_hex'],
    ['unknown kind', (b) => { b.artifacts[5]!.kind = 'widget'; }, 'artifacts[5].kind'],
    ['two latest versions', (b) => { b.artifacts[0]!.is_latest = true; }, 'artifacts[1].is_latest'],
    ['no latest version', (b) => { b.artifacts[1]!.is_latest = false; }, 'artifacts'],
    ['duplicate version', (b) => { b.artifacts[0]!.version_ordinal = 2; }, 'artifacts[1].version_ordinal'],
    ['version ordinal zero', (b) => { b.artifacts[5]!.version_ordinal = 0; }, 'artifacts[5].version_ordinal'],
    ['unknown relationship endpoint', (b) => { b.relationships[0]!.to.id = 'tl-x'; }, 'relationships[0].to.id'],
    ['bad rel_type', (b) => { b.relationships[0]!.rel_type = 'likes'; }, 'relationships[0].rel_type'],
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
    expect(new Set(latest.filter((a) => a.kind === 'tool').map((a) => a.server_id)).size).toBe(12);
    expect(b.organizations.map((o) => o.id)).toEqual(['org-acme', 'org-globex', 'org-initech', 'org-umbrella']);
    expect(b.memberships).toContainEqual({ workspace_id: 'ws-acme', user_id: 'user-alice', role: 'admin' });
    expect(latest.find((a) => a.id === 'agent-0001')?.workspace_id).toBe('ws-acme-platform');
    expect(b.artifacts.some((a) => !a.is_latest)).toBe(true);
    expect(b.identities.length).toBeGreaterThan(50);
    expect(b.profile_images.length).toBeGreaterThan(40);
  });
});
