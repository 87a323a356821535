/**
 * The demo's first start (seed.ts): with its telemetry it records a few insights about the first
 * two skills and the first agent of org-acme, on the UTC days before the start, each payload valid
 * with Ajv against operation 4's schema of its kind, each id detection's own for its key and
 * window (so detection never stores a second one); a second start records nothing again.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { insightId } from '../../src/insights/detect.ts';
import { seedDemoIfEmpty, seedDemoTracesIfEmpty } from '../../src/seed/seed.ts';
import { listInsightSchemas } from '../../src/skills/insight-schemas.ts';
import type { InsightRecord } from '../../src/store/insight-port.ts';
import { openRegistryStore } from '../../src/store/open-registry.ts';
import { openTraceStore } from '../../src/store/open-traces.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import type { TraceStore } from '../../src/store/trace-port.ts';

const DAY = 86_400;
const END = 1_790_040_000; // 2026-09-22 01:20 UTC
let dir: string;
let registry: RegistryStore;
let traces: TraceStore;
let found: InsightRecord[];

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gw-demo-insights-'));
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dir, TRACE_RETENTION_DAYS: '0' });
  registry = await openRegistryStore(config);
  traces = await openTraceStore(config);
  await seedDemoIfEmpty(registry);
  expect(await seedDemoTracesIfEmpty(registry, traces, 500, END)).toBe(true);
  const workspaces = (await registry.listOrgWorkspaces('org-acme')).map((w) => w.id);
  found = await registry.insights.listInsights({ orgId: 'org-acme', workspaceIds: workspaces, limit: 100 });
});
afterAll(async () => {
  await traces.close();
  await registry.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('demo insights', () => {
  it('about two skills and an agent, on whole UTC days before the start', () => {
    expect(found).toHaveLength(9);
    const subjects = [...new Set(found.map((i) => `${i.subject.type}:${i.subject.id}`))].sort();
    expect(subjects).toEqual(['agent:agent-0001', 'skill:skill-0001', 'skill:skill-0002']);
    const today = Math.floor(END / DAY) * DAY;
    for (const i of found) {
      expect([i.id, i.window_end_s - i.window_start_s, i.window_end_s % DAY]).toEqual([i.id, DAY, 0]);
      expect(i.window_end_s).toBeLessThanOrEqual(today);
      expect(i.window_end_s).toBeGreaterThan(today - 14 * DAY);
    }
  });

  it('every payload is valid against its kind’s schema', () => {
    const schemas = listInsightSchemas().items;
    expect(new Set(found.map((i) => i.kind)).size).toBe(6);
    const ajv = new Ajv2020.default({ strict: true });
    for (const i of found) {
      const schema = schemas.find((s) => s.name === i.kind)?.schema;
      expect(schema, i.kind).toBeDefined();
      const validate = ajv.compile(schema ?? {});
      expect([i.kind, i.subject.id, validate(i.payload), validate.errors ?? null]).toEqual([
        i.kind,
        i.subject.id,
        true,
        null,
      ]);
    }
  });

  it('has detection’s id for its key and window: detection finding one again stores nothing', () => {
    for (const i of found) {
      const detail = i.kind === 'evaluation_drop' ? String(i.payload.evaluation_name) : undefined;
      const key = { orgId: i.org_id, workspaceId: i.workspace_id, kind: i.kind, subject: i.subject };
      const window = { startS: i.window_start_s, endS: i.window_end_s };
      expect(i.id, i.kind).toBe(insightId({ ...key, ...(detail !== undefined && { detail }) }, window));
    }
  });

  it('a second start records none again', async () => {
    expect(await seedDemoTracesIfEmpty(registry, traces, 500, END + DAY)).toBe(false);
    const workspaces = (await registry.listOrgWorkspaces('org-acme')).map((w) => w.id);
    const again = await registry.insights.listInsights({ orgId: 'org-acme', workspaceIds: workspaces, limit: 100 });
    expect(again.map((i) => i.id)).toEqual(found.map((i) => i.id));
  });
});
