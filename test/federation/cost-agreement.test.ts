/**
 * A router's demand control and our operation limits price an operation alike: the static
 * estimate from the SDL's `@cost`/`@listSize` (sdl-cost.ts) against our own cost model
 * (src/graphql/limits/analyze-operation.ts) on the same operations, lists, nesting, `traceStats`,
 * `_entities` and MCP servers among them. Where the SDL cannot say what our model knows (a `first`
 * above the field's maximum, the points of a statistics table or series), the router's error
 * has one known direction, pinned below.
 */
import { describe, expect, it } from 'vitest';
import { buildRegistrySubgraph } from '../../src/graphql/schema.ts';
import { SETTING_COUNT } from '../../src/insights/settings.ts';
import { COST_OPERATIONS, DAY, ourCost as ours, START } from './cost-operations.ts';
import { sdlEstimate } from './sdl-cost.ts';

const schema = buildRegistrySubgraph();

describe('the router estimate from the SDL agrees with our cost model', () => {
  it('covers at least 20 operations', () => {
    expect(COST_OPERATIONS.length).toBeGreaterThanOrEqual(20);
  });

  it.each(COST_OPERATIONS)('%s: within 10 %%', (_name, query, variables) => {
    const mine = ours(query, variables);
    const router = sdlEstimate(schema, query, variables);
    expect(mine).toBeGreaterThan(0);
    expect(Math.abs(router - mine) / mine).toBeLessThanOrEqual(0.1);
  });
});

describe('where the SDL cannot say what our model knows, the error has one direction', () => {
  it('a first above the maximum: ours clamps it (as the handler does), a router takes it as sent (over, never under)', () => {
    const query = '{ tools(first: 1000) { nodes { id } } }';
    expect(ours(query)).toBe(1 + 200);
    expect(sdlEstimate(schema, query)).toBe(1 + 1000);
  });

  it('statistics priced by groups × buckets × compare: a router counts only the queries (under; we still refuse)', () => {
    const series = `{ startTimeUnixSeconds: ${START}, endTimeUnixSeconds: ${START + 90 * DAY}, requestType: TIME_SERIES, compare: PREVIOUS_PERIOD, queries: [{ name: "q", measure: SPANS, groupBy: [USER], limit: 100 }] }`;
    const query = `{ skill(id: "s") { traceStats(input: ${series}) { meta { warnings } } } }`;
    expect(ours(query)).toBe(1 + 100 * 90 * 2);
    expect(sdlEstimate(schema, query)).toBe(1 + 1);
  });
});

describe('a mutation: its answer priced at its bound, its input list bounded by validation instead', () => {
  it('setInsightSettings costs its answer (every setting), however many overrides are sent', () => {
    const mutation =
      'mutation($i: SetInsightSettingsInput!) { setInsightSettings(input: $i) { workspaceId settings { name value } } }';
    for (const n of [0, 1, SETTING_COUNT, 500]) {
      const overrides = Array.from({ length: n }, (_, k) => ({ name: `s${k}`, value: 1 }));
      const variables = { i: { workspaceId: 'w', overrides } };
      // Over SETTING_COUNT the operation is refused at execution (422 invalid_field, as REST's maxProperties).
      expect([n, ours(mutation, variables), sdlEstimate(schema, mutation, variables)]).toEqual([
        n,
        1 + SETTING_COUNT,
        1 + SETTING_COUNT,
      ]);
    }
  });
});
