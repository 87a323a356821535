/**
 * The org tree and membership caches (src/auth/registry-memo.ts) over a real SQLite store: read
 * once per generation, re-read after any import (in this process or another connection's), one
 * value per key and per store, frozen, and bounded in the number of keys they keep.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAccess } from '../../src/auth/access.ts';
import { orgTree, userMemberships } from '../../src/auth/registry-memo.ts';
import { parseBundle } from '../../src/bundle/parse.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { countingStore } from '../graphql/helpers.ts';

const T0 = '2026-01-01T00:00:00Z';
const tempFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-trees-')), 'registry.sqlite');
const ids = (tree: readonly { id: string }[]) => tree.map((w) => w.id);

function orgsBundle(n: number) {
  const orgs = Array.from({ length: n }, (_, i) => `org-${i}`);
  return {
    organizations: orgs.map((id) => ({ id, name: id, status: 'active' })),
    workspaces: orgs.map((org) => ({
      id: `ws-${org}`,
      org_id: org,
      name: org,
      display_name: org,
      kind: 'org',
      workspace_status: 'active',
      created_at: T0,
      created_by: 'u',
      updated_at: T0,
      updated_by: 'u',
    })),
  };
}

describe('org tree cache', () => {
  it('reads a tree once per generation and again after an import, from this connection or another', async () => {
    const file = tempFile();
    const counter = countingStore();
    const store = counter.wrap(new SqliteRegistryStore(file));
    await store.importBundle(parseBundle(smallBundle()));
    expect(ids(await orgTree(store, 'org-a'))).toEqual(['ws-a', 'ws-a-other', 'ws-a-sub', 'ws-a-team']);
    counter.reset();
    expect(ids(await orgTree(store, 'org-a'))).toHaveLength(4);
    expect(counter.calls()).toEqual({ generation: 1 });

    const bundle = smallBundle();
    bundle.workspaces.push({ ...bundle.workspaces[3]!, id: 'ws-a-new', name: 'new' });
    await store.importBundle(parseBundle(bundle));
    counter.reset();
    expect(ids(await orgTree(store, 'org-a'))).toContain('ws-a-new');
    expect(counter.calls()).toEqual({ generation: 1, listOrgWorkspaces: 1 });

    // Another process (here: another connection) imports: the generation moves for this one too.
    const cli = new SqliteRegistryStore(file);
    bundle.workspaces.push({ ...bundle.workspaces[3]!, id: 'ws-a-cli', name: 'cli' });
    await cli.importBundle(parseBundle(bundle));
    await cli.close();
    expect(ids(await orgTree(store, 'org-a'))).toContain('ws-a-cli');
    expect(ids(await orgTree(store, 'org-b'))).toEqual(['ws-b']);
    await store.close();
  });

  it("hands out frozen workspaces, so no request can change another request's tree", async () => {
    const store = new SqliteRegistryStore(tempFile());
    await store.importBundle(parseBundle(smallBundle()));
    const tree = await orgTree(store, 'org-a');
    expect(Object.isFrozen(tree)).toBe(true);
    expect(() => {
      (tree[0] as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    await store.close();
  });

  it('keeps at most 1,000 organizations per store, dropping the least recently used', async () => {
    const counter = countingStore();
    const store = counter.wrap(new SqliteRegistryStore(tempFile()));
    await store.importBundle(parseBundle(orgsBundle(1_001)));
    for (let i = 0; i <= 1_000; i++) await orgTree(store, `org-${i}`);
    counter.reset();
    await orgTree(store, 'org-1000');
    await orgTree(store, 'org-1');
    expect(counter.calls().listOrgWorkspaces ?? 0).toBe(0);
    await orgTree(store, 'org-0');
    expect(counter.calls().listOrgWorkspaces).toBe(1);
    await store.close();
  });

  it("reads a user's memberships once per generation and again after an import that changes them", async () => {
    const file = tempFile();
    const counter = countingStore();
    const store = counter.wrap(new SqliteRegistryStore(file));
    const bundle = smallBundle();
    await store.importBundle(parseBundle(bundle));
    const roles = async () => (await userMemberships(store, 'u-viewer')).map((m) => `${m.workspace_id}:${m.role}`);
    expect(await roles()).toEqual(['ws-a-team:viewer']);
    counter.reset();
    expect(await roles()).toEqual(['ws-a-team:viewer']);
    expect(counter.calls()).toEqual({ generation: 1 });
    const kept = await userMemberships(store, 'u-viewer');
    expect(Object.isFrozen(kept) && Object.isFrozen(kept[0])).toBe(true);

    // Promoted by another connection's import: the next reading sees the new role.
    bundle.memberships.push({ workspace_id: 'ws-a', user_id: 'u-viewer', role: 'editor' });
    const cli = new SqliteRegistryStore(file);
    await cli.importBundle(parseBundle(bundle));
    await cli.close();
    counter.reset();
    expect(await roles()).toEqual(['ws-a:editor', 'ws-a-team:viewer']);
    expect(counter.calls()).toEqual({ generation: 1, getMembershipsOfUser: 1 });
    await store.close();
  });
});

describe('kept Access', () => {
  it('is one object per caller and generation, rebuilt when an import moves the generation', async () => {
    const counter = countingStore();
    const store = counter.wrap(new SqliteRegistryStore(tempFile()));
    await store.importBundle(parseBundle(smallBundle()));
    const viewer = { kind: 'user', orgId: 'org-a', userId: 'u-viewer' } as const;
    const first = await loadAccess(store, viewer);
    expect(first.canRead('ws-a-other')).toBe(false);
    counter.reset();
    // Another Caller object of the same identity: the same Access, without a store read.
    expect(await loadAccess(store, { ...viewer })).toBe(first);
    expect(counter.calls()).toEqual({ generation: 1 });
    // Another identity never gets it: another user, or a service account of another workspace.
    const admin = await loadAccess(store, { ...viewer, userId: 'u-admin' });
    expect(admin).not.toBe(first);
    expect(admin.canRead('ws-a-other')).toBe(true);
    const agent = {
      kind: 'service_account',
      orgId: 'org-a',
      agentId: 'ag-1',
      clientId: 'c',
      workspaceId: 'ws-a-sub',
    } as const;
    const inSub = await loadAccess(store, agent);
    expect(inSub.readableWorkspaceIds).toEqual(['ws-a-sub']);
    expect((await loadAccess(store, { ...agent, workspaceId: 'ws-a-team' })).readableWorkspaceIds).toEqual([
      'ws-a-sub',
      'ws-a-team',
    ]);

    const bundle = smallBundle();
    bundle.memberships.push({ workspace_id: 'ws-a-other', user_id: 'u-viewer', role: 'viewer' });
    await store.importBundle(parseBundle(bundle));
    const after = await loadAccess(store, viewer);
    expect(after).not.toBe(first);
    expect(after.canRead('ws-a-other')).toBe(true);
  });
});
