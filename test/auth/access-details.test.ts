/**
 * The authorization model's edges (src/auth/access.ts): memberships outside the org's tree, the
 * readable scope of a subtree, joining and leaving (never a personal workspace; never a service
 * account), what an admin, an editor, a viewer and a service account may do with an artifact, and
 * loadAccess over any store: the strongest of several memberships, and a tree read again when the
 * registry's generation moves.
 */
import { describe, expect, it } from 'vitest';
import { Access, loadAccess } from '../../src/auth/access.ts';
import type { Caller } from '../../src/auth/caller.ts';
import type { Membership, Role } from '../../src/domain/types.ts';
import { ApiError } from '../../src/errors.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { ws } from '../fixtures/workspace.ts';

const TREE = [
  ws('ws-a', undefined, 'org'),
  ws('ws-team', 'ws-a'),
  ws('ws-sub', 'ws-team'),
  ws('ws-other', 'ws-a'),
  ws('ws-home', 'ws-a', 'user_default'),
];
const USER: Caller = { kind: 'user', orgId: 'org-a', userId: 'u-1' };
const AGENT: Caller = {
  kind: 'service_account',
  orgId: 'org-a',
  agentId: 'ag-1',
  workspaceId: 'ws-team',
  clientId: 'c',
};
const access = (roles: [string, Role][], caller: Caller = USER, tree = TREE) =>
  new Access(caller, tree, new Map(roles));

function refusal(fn: () => void): string {
  try {
    fn();
    return 'allowed';
  } catch (err) {
    if (err instanceof ApiError) return `${err.code}: ${err.message}`;
    throw err;
  }
}

describe('scope', () => {
  it('a membership on a workspace outside the org tree gives nothing', () => {
    const a = access([
      ['ws-team', 'viewer'],
      ['ws-elsewhere', 'admin'],
    ]);
    expect(a.readableWorkspaceIds).toEqual(['ws-sub', 'ws-team']);
    expect(a.subtree('ws-elsewhere')).toEqual([]);
    expect(a.canRead('ws-elsewhere')).toBe(false);
    expect(a.canCreateContent('ws-elsewhere')).toBe(false);
  });

  it('narrows to a readable subtree, or is every readable workspace', () => {
    const a = access([['ws-a', 'viewer']]);
    expect(a.scope(undefined)).toEqual(['ws-a', 'ws-home', 'ws-other', 'ws-sub', 'ws-team']);
    expect(a.scope('ws-team')).toEqual(['ws-team', 'ws-sub']);
    const b = access([['ws-sub', 'viewer']]);
    expect(refusal(() => b.scope('ws-team'))).toBe('access_denied: no read access to workspace ws-team');
    expect(refusal(() => b.scope('ws-nowhere'))).toBe('not_found: workspace ws-nowhere not found');
    expect(refusal(() => b.assertReadable('ws-other'))).toBe('access_denied: no read access to workspace ws-other');
  });
});

describe('joining and leaving', () => {
  it('a user may join a discoverable workspace they have no role on, except a personal one', () => {
    const a = access([
      ['ws-team', 'viewer'],
      ['ws-home', 'admin'],
    ]);
    const join = (id: string) => a.workspacePermissions(id).can_join;
    expect([join('ws-other'), join('ws-a'), join('ws-team'), join('ws-sub'), join('ws-nowhere')]).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(access([['ws-team', 'viewer']]).workspacePermissions('ws-home').can_join).toBe(false);
  });

  it('a user may leave a workspace they are a direct member of, except a personal one', () => {
    const a = access([
      ['ws-team', 'viewer'],
      ['ws-home', 'admin'],
    ]);
    const leave = (id: string) => a.workspacePermissions(id).can_leave;
    expect([leave('ws-team'), leave('ws-sub'), leave('ws-home'), leave('ws-other')]).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });

  it('a service account neither joins nor leaves, and reads only its subtree', () => {
    const a = access([['ws-team', 'editor']], AGENT);
    expect(a.workspacePermissions('ws-other')).toMatchObject({ can_join: false, can_leave: false, can_read: false });
    expect(a.workspacePermissions('ws-team')).toMatchObject({
      can_join: false,
      can_leave: false,
      can_read: true,
      can_create_content: true,
    });
  });

  it('a project has the permissions of its workspace', () => {
    const a = access([['ws-team', 'editor']]);
    for (const id of ['ws-team', 'ws-other'])
      expect(a.projectPermissions({ workspace_id: id })).toEqual(a.workspacePermissions(id));
  });
});

describe('artifact permissions', () => {
  const mine = { workspace_id: 'ws-team', created_by: 'u-1' };
  const theirs = { workspace_id: 'ws-team', created_by: 'u-2' };
  const all = (v: boolean) => ({
    can_add_relationship: v,
    can_create_version: v,
    can_delete: v,
    can_edit: v,
    can_link: v,
    can_read: v,
    can_remove_relationship: v,
    can_unlink: v,
  });

  it('an admin may do everything, whoever created the artifact', () => {
    expect(access([['ws-team', 'admin']]).artifactPermissions(theirs)).toEqual(all(true));
  });

  it('an editor writes, and deletes only what they created', () => {
    const a = access([['ws-team', 'editor']]);
    expect(a.artifactPermissions(mine)).toEqual(all(true));
    expect(a.artifactPermissions(theirs)).toEqual({ ...all(true), can_delete: false });
  });

  it('a viewer only reads; without a role, nothing', () => {
    expect(access([['ws-team', 'viewer']]).artifactPermissions(mine)).toEqual({ ...all(false), can_read: true });
    expect(access([['ws-other', 'admin']]).artifactPermissions(mine)).toEqual(all(false));
  });

  it('a service account writes its subtree but deletes nothing, even what names no creator it knows', () => {
    const a = access([['ws-team', 'editor']], AGENT);
    expect(a.artifactPermissions({ workspace_id: 'ws-sub', created_by: 'ag-1' })).toEqual({
      ...all(true),
      can_delete: false,
    });
  });
});

describe('loadAccess over a store', () => {
  /** A registry holding only what loadAccess reads, whose generation and tree a test can move. */
  function stub(memberships: Membership[]) {
    const state = { generation: 'g1', tree: TREE, treeReads: 0 };
    const store = {
      generation: async () => state.generation,
      listOrgWorkspaces: async () => {
        state.treeReads++;
        return state.tree;
      },
      getMembershipsOfUser: async () => memberships,
    } as unknown as RegistryStore;
    return { store, state };
  }

  it('the strongest of several memberships on one workspace wins, in any order', async () => {
    for (const roles of [
      ['viewer', 'admin', 'editor'],
      ['admin', 'viewer'],
      ['editor', 'viewer'],
    ] as Role[][]) {
      const { store } = stub(roles.map((role) => ({ workspace_id: 'ws-team', user_id: 'u-1', role })));
      const best = roles.includes('admin') ? 'admin' : 'editor';
      expect((await loadAccess(store, USER)).roleOf('ws-sub')).toBe(best);
    }
  });

  it("reads the org's tree again once the registry's generation moves", async () => {
    const { store, state } = stub([{ workspace_id: 'ws-a', user_id: 'u-1', role: 'viewer' }]);
    expect((await loadAccess(store, USER)).readableWorkspaceIds).toHaveLength(5);
    expect((await loadAccess(store, USER)).readableWorkspaceIds).toHaveLength(5);
    expect(state.treeReads).toBe(1);
    state.tree = [...TREE, ws('ws-new', 'ws-a')];
    state.generation = 'g2';
    expect((await loadAccess(store, USER)).readableWorkspaceIds).toContain('ws-new');
    expect(state.treeReads).toBe(2);
  });

  it('a service account acts as editor of its own workspace subtree', async () => {
    const { store } = stub([]);
    const a = await loadAccess(store, AGENT);
    expect(a.readableWorkspaceIds).toEqual(['ws-sub', 'ws-team']);
    expect(a.roleOf('ws-sub')).toBe('editor');
  });
});
