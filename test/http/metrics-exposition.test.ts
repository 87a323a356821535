/**
 * `/metrics` as Prometheus lints it (the rules `promtool check metrics` applies that a registry can
 * break): every family has HELP and TYPE, counters end in `_total` and nothing else does.
 */
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.ts';

describe('metrics exposition', () => {
  it('the default and the gateway metrics follow the naming rules', async () => {
    const metrics = createMetrics();
    metrics.httpRequests.inc({ method: 'GET', route: '/x', status: '200' });
    const text = await metrics.registry.metrics();
    const types = new Map<string, string>();
    const helps = new Set<string>();
    for (const line of text.split('\n')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) types.set(type[1] as string, type[2] as string);
      const help = /^# HELP (\S+) \S/.exec(line);
      if (help) helps.add(help[1] as string);
    }
    expect(types.size).toBeGreaterThan(10);
    expect(types.get('gateway_http_requests_total')).toBe('counter');
    expect(types.has('process_cpu_seconds_total')).toBe(true);
    for (const [name, type] of types) {
      expect(helps.has(name), `${name} has HELP`).toBe(true);
      if (type === 'counter') expect(name, `counter ${name}`).toMatch(/_total$/);
      else expect(name, `${type} ${name}`).not.toMatch(/_total$/);
    }
  });
});
