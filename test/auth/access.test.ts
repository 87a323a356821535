/**
 * The authorization model (src/auth/access.ts) unit by unit: which role applies where, and what each
 * role may do. Written against the survivors of a mutation run (npm run test:mutation): the strongest
 * role on the path wins, editors write but do not administer, an artifact's creator may delete it.
 */
import { describe, expect, it } from 'vitest';
import { Access } from '../../src/auth/access.ts';
import { ws } from '../fixtures/workspace.ts';

const TREE = [ws('ws-a', undefined, 'org'), ws('ws-team', 'ws-a'), ws('ws-sub', 'ws-team'), ws('ws-other', 'ws-a')];
const user = (roles: [string, 'admin' | 'editor' | 'viewer'][]) =>
  new Access({ kind: 'user', orgId: 'org-a', userId: 'u-1' }, TREE, new Map(roles));

describe('Access: roles', () => {
  it('the strongest role on the path from the root applies, whatever the order of the memberships', () => {
    const a = user([
      ['ws-sub', 'viewer'],
      ['ws-team', 'admin'],
    ]);
    expect(a.roleOf('ws-sub')).toBe('admin');
    const b = user([
      ['ws-a', 'viewer'],
      ['ws-team', 'editor'],
    ]);
    expect([b.roleOf('ws-a'), b.roleOf('ws-team'), b.roleOf('ws-sub'), b.roleOf('ws-other')]).toEqual([
      'viewer',
      'editor',
      'editor',
      'viewer',
    ]);
    expect(b.readableWorkspaceIds).toEqual(['ws-a', 'ws-other', 'ws-sub', 'ws-team']);
    expect(user([['ws-team', 'viewer']]).readableWorkspaceIds).toEqual(['ws-sub', 'ws-team']);
  });
});

describe('Access: what each role may do', () => {
  it('workspace permissions: editors create content, only admins delete, update and manage members', () => {
    const a = user([
      ['ws-a', 'viewer'],
      ['ws-team', 'editor'],
      ['ws-other', 'admin'],
    ]);
    expect(a.workspacePermissions('ws-team')).toMatchObject({
      can_create_content: true,
      can_delete: false,
      can_update: false,
      can_manage_members: false,
      can_read: true,
      can_leave: true,
      can_join: false,
    });
    expect(a.workspacePermissions('ws-a')).toMatchObject({
      can_create_content: false,
      can_read: true,
      can_delete: false,
    });
    expect(a.workspacePermissions('ws-other')).toMatchObject({
      can_create_content: true,
      can_delete: true,
      can_update: true,
      can_manage_members: true,
    });
    expect(a.canCreateContent('ws-sub')).toBe(true);
    expect(a.canCreateContent('ws-a')).toBe(false);
  });

  it('artifact permissions: editors write, and delete what they created; viewers only read; admins delete anything', () => {
    const a = user([
      ['ws-a', 'viewer'],
      ['ws-team', 'editor'],
      ['ws-other', 'admin'],
    ]);
    const mine = a.artifactPermissions({ workspace_id: 'ws-team', created_by: 'u-1' });
    const theirs = a.artifactPermissions({ workspace_id: 'ws-team', created_by: 'u-2' });
    expect(mine).toMatchObject({ can_edit: true, can_create_version: true, can_link: true, can_delete: true });
    expect(theirs).toMatchObject({ can_edit: true, can_add_relationship: true, can_delete: false });
    expect(a.artifactPermissions({ workspace_id: 'ws-a', created_by: 'u-1' })).toMatchObject({
      can_read: true,
      can_edit: false,
      can_delete: false,
      can_unlink: false,
    });
    expect(a.artifactPermissions({ workspace_id: 'ws-other', created_by: 'u-2' })).toMatchObject({ can_delete: true });
  });

  it('a resource is 404 when not discoverable and 403 when discoverable but unreadable, naming what was asked', () => {
    const a = user([['ws-team', 'viewer']]);
    expect(() => a.assertReadable('ws-other', 'agent', 'ag-9')).toThrow('no read access to agent ag-9');
    expect(() => a.assertReadable('ws-b', 'agent', 'ag-b')).toThrow('agent ag-b not found');
  });
});
