/**
 * The cost model of the operation limits, on the real subgraph schema: every list priced by the
 * size it will really get (DESIGN §12). Exact prices, so a change of the model shows here.
 */
import {
  getIntrospectionQuery,
  getOperationAST,
  isInterfaceType,
  isObjectType,
  Kind,
  parse,
  validate,
  type FragmentDefinitionNode,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { analyzeOperation, MAX_LEVELS } from '../../src/graphql/limits/analyze-operation.ts';
import { introspectionSizes } from '../../src/graphql/limits/introspection-sizes.ts';
import { DEFAULT_LIMITS } from '../../src/graphql/limits/limits-plugin.ts';
import { TRACE_WORK_BUDGET, usageWork } from '../../src/graphql/limits/trace-budget.ts';
import { nestingDepth } from '../../src/graphql/limits/nesting.ts';
import { buildRegistrySubgraph } from '../../src/graphql/schema.ts';

const schema = buildRegistrySubgraph();

function measure(query: string, variables: Record<string, unknown> = {}) {
  const doc = parse(query);
  expect(validate(schema, doc)).toEqual([]);
  const fragments = doc.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION);
  const operation = getOperationAST(doc);
  if (!operation) throw new Error('no operation');
  return analyzeOperation(schema, operation, fragments, variables, DEFAULT_LIMITS);
}
const cost = (query: string, variables: Record<string, unknown> = {}) => measure(query, variables).cost;

describe('paged lists: the page the handler serves', () => {
  it('a literal first, clamped to the field maximum', () => {
    expect(cost('{ tools(first: 30) { nodes { id } } }')).toBe(1 + 30);
    expect(cost('{ tools(first: 100000) { nodes { id } } }')).toBe(1 + 200);
    expect(cost('{ agentSearch(first: 100000) { nodes { id } } }')).toBe(1 + 100);
  });

  it('a sent variable, else the variable default, else the handler default when absent or null', () => {
    const query = 'query($n: Int = 200) { tools(first: $n) { nodes { id } } }';
    expect(cost(query)).toBe(1 + 200);
    expect(cost(query, { n: 7 })).toBe(1 + 7);
    expect(cost(query, { n: null })).toBe(1 + 50);
    expect(cost('query($n: Int) { tools(first: $n) { nodes { id } } }')).toBe(1 + 50);
    expect(cost('{ tools(first: null) { nodes { id } } }')).toBe(1 + 50);
  });

  it('each paged field at its own default: agentSearch 20, tools, toolAggregate, users, artifacts, servers 50', () => {
    expect(cost('{ agentSearch { nodes { id } } }')).toBe(1 + 20);
    expect(cost('{ tools { nodes { id } } }')).toBe(1 + 50);
    expect(cost('{ toolAggregate { nodes { count } } }')).toBe(1 + 50);
    expect(cost('{ users { nodes { id } } }')).toBe(1 + 50);
    // the object, its connection, the page
    expect(cost('{ workspace(id: "w") { artifacts { nodes { id } } } }')).toBe(1 + 1 + 50);
    expect(cost('{ project(id: "p") { artifacts { nodes { id } } } }')).toBe(1 + 1 + 50);
    expect(cost('{ user(id: "u") { artifacts { nodes { id } } } }')).toBe(1 + 1 + 50);
    expect(cost('{ mcpServers { nodes { id } } }')).toBe(1 + 50);
    expect(cost('{ mcpServer(id: "s") { tools { nodes { id } } } }')).toBe(1 + 1 + 50);
    expect(cost('{ mcpServers(first: 1000) { nodes { tools(first: 1000) { totalCount } } } }')).toBe(1 + 200 * 2);
  });

  it('edges and nodes both take the page; nested pages multiply', () => {
    expect(
      cost('{ tools(first: 10) { totalCount edges { cursor node { id } } nodes { id } pageInfo { hasNextPage } } }'),
    ).toBe(1 + 10 * 2 + 10 + 1);
    expect(cost('{ users(first: 4) { nodes { artifacts(first: 3) { nodes { id } } } } }')).toBe(1 + 4 * (1 + 1 + 3));
    expect(cost('{ tools(first: 0) { totalCount } }')).toBe(1);
  });
});

describe('published documents: a unit per KiB they may hold', () => {
  it('the document weighs 32 and each of its packages and remotes 1 + 3, wherever they are selected', () => {
    expect(cost('{ mcpServer(id: "s") { server } }')).toBe(1 + 32);
    expect(cost('{ mcpServer(id: "s") { packages { registryType } remotes { url } } }')).toBe(1 + 2 * 10 * (1 + 3));
    expect(cost('{ mcpServers(first: 200) { nodes { server } } }')).toBe(1 + 200 * (1 + 32));
    expect(cost('{ tools(first: 10) { nodes { server { server } } } }')).toBe(1 + 10 * (1 + 1 + 32));
  });

  it('thirty aliases of 200 whole documents are over the budget; one page of 50 is not', () => {
    const page = 'mcpServers(first: 200, search: "io.big/s") { nodes { server } }';
    const aliases = Array.from({ length: 30 }, (_, i) => `a${i}: ${page}`).join(' ');
    expect(cost(`{ ${aliases} }`)).toBeGreaterThan(DEFAULT_LIMITS.maxCost);
    expect(cost('{ mcpServers(first: 50) { nodes { server } } }')).toBeLessThan(DEFAULT_LIMITS.maxCost);
  });
});

describe('other lists', () => {
  it('lists without a page argument at the default estimate, multiplied by nesting', () => {
    expect(cost('{ workspace(id: "w") { subtree { children { id } } } }')).toBe(1 + 10 * (1 + 10));
  });

  it('_entities by its representations, from a literal or a variable', () => {
    const reps = [1, 2, 3].map((i) => ({ __typename: 'Agent', id: `a${i}` }));
    expect(
      cost('query($r: [_Any!]!) { _entities(representations: $r) { ... on Agent { id workspace { id } } } }', {
        r: reps,
      }),
    ).toBe(3 * (1 + 1));
    expect(cost('{ _entities(representations: [{ __typename: "Agent", id: "a" }]) { ... on Agent { id } } }')).toBe(1);
  });

  it('a fragment spread twice counts twice, aliases included', () => {
    const query = '{ a: viewer { ...W } b: viewer { ...W } } fragment W on Viewer { ws: workspaces { id } }';
    expect(measure(query)).toEqual({
      depth: 3,
      aliases: 4,
      cost: 2 * (1 + 10),
      usageWindows: [],
      serverUsage: false,
    });
  });

  it('an operation whose fragments expand past the walk bound is measured as that deep', () => {
    let query = '{ workspace(id: "w") { ...G0 } }';
    for (let i = 0; i < 200; i++) query += ` fragment G${i} on Workspace { parent { ...G${i + 1} } }`;
    query += ' fragment G200 on Workspace { id }';
    expect(measure(query).depth).toBe(MAX_LEVELS + 1);
  });
});

describe('Skill.traceStats: the points of its answer', () => {
  const DAY = 86_400;
  const input = (extra: string) =>
    `{ startTimeUnixSeconds: 1767225600, endTimeUnixSeconds: ${1767225600 + 90 * DAY}, ${extra} }`;

  it('queries × groups × buckets, ×2 with compare, from literals or variables', () => {
    const series = input(
      'requestType: TIME_SERIES, compare: PREVIOUS_PERIOD, queries: [{ name: "q", measure: SPANS, groupBy: [USER], limit: 100 }]',
    );
    expect(cost(`{ skill(id: "s") { traceStats(input: ${series}) { meta { warnings } } } }`)).toBe(1 + 100 * 90 * 2);
    const variables = {
      in: {
        startTimeUnixSeconds: 1767225600,
        endTimeUnixSeconds: 1767225600 + 90 * DAY,
        requestType: 'TABLE',
        queries: [
          { name: 'a', measure: 'SPANS', groupBy: ['USER'] },
          { name: 'b', measure: 'TOKENS' },
        ],
      },
    };
    // a table: the lead query's groups (default limit 100) × queries
    expect(
      cost(
        'query($in: TraceStatsInput!) { skill(id: "s") { traceStats(input: $in) { meta { warnings } } } }',
        variables,
      ),
    ).toBe(1 + 100 * 2);
  });

  it('multiplied by the lists it is under', () => {
    const scalar = input(
      'requestType: SCALAR, queries: [{ name: "a", measure: SPANS }, { name: "b", measure: TOKENS }]',
    );
    expect(
      cost(`{ agentSearch(first: 3) { nodes { usedSkills { traceStats(input: ${scalar}) { meta { warnings } } } } } }`),
    ).toBe(1 + 3 * (1 + 10 * (1 + 2)));
  });

  it('an invalid input costs 1 (execution reports why)', () => {
    expect(
      cost(
        `{ skill(id: "s") { traceStats(input: ${input('requestType: SCALAR, queries: []')}) { meta { warnings } } } }`,
      ),
    ).toBe(1 + 1);
  });
});

describe('Tool.usage: its distinct windows, priced before execution', () => {
  const windows = (query: string, variables: Record<string, unknown> = {}) =>
    [...measure(query, variables).usageWindows].sort((a, b) => (a ?? -1) - (b ?? -1));

  it('every alias, list, fragment and _entities path; literals, variables and defaults; no since is null', () => {
    const query = `query($s: Int = 500, $t: Int, $r: [_Any!]!) {
      tools(first: 200) { nodes { a: usage(since: 100) { calls } b: usage(since: $s) { calls } ...U } }
      tool(id: "t") { usage { calls } c: usage(since: 100) { calls } }
      _entities(representations: $r) { ... on Tool { usage(since: $t) { calls } } }
    } fragment U on Tool { d: usage(since: 300) { calls } }`;
    expect(windows(query, { r: [] })).toEqual([null, 100, 300, 500]);
    expect(windows(query, { r: [], s: 7, t: 9 })).toEqual([null, 7, 9, 100, 300]);
  });

  it('the same window under 200 tools or on one is one window: the budget prices windows, not lookups', () => {
    expect(windows('{ tools(first: 200) { nodes { usage(since: 5) { calls } } } }')).toEqual([5]);
    expect(windows('{ tool(id: "t") { usage(since: 5) { calls } } }')).toEqual([5]);
    expect(measure('{ tools(first: 200) { nodes { id } } }').usageWindows).toEqual([]);
  });

  it('the price of a window: weight 4 × (whole weeks to now + 1); every stored call as 366 days', () => {
    const now = 1_800_000_000;
    expect(usageWork([now - 3600], now)).toBe(4 * 2);
    expect(usageWork([now - 7 * 86400], now)).toBe(4 * 2);
    expect(usageWork([now - 7 * 86400 - 1], now)).toBe(4 * 3);
    expect(usageWork([now - 30 * 86400], now)).toBe(4 * 6);
    expect(usageWork([null], now)).toBe(4 * 54);
    expect(usageWork([1], now)).toBe(4 * 54);
    expect(usageWork([now + 86400], now)).toBe(4 * 1);
    expect(usageWork([now - 3600, now - 3600, null, null], now)).toBe(4 * 2 + 4 * 54);
    // Twenty windows over every stored call are the whole budget; a twenty-first is refused.
    expect(
      usageWork(
        Array.from({ length: 20 }, (_, i) => i),
        now,
      ),
    ).toBe(TRACE_WORK_BUDGET);
  });
});

describe('McpServer.usage: its one window, priced before execution', () => {
  it('found on every path: a list, a nested server, a fragment, _entities', () => {
    const found = (query: string) => measure(query, { r: [] }).serverUsage;
    expect(found('{ mcpServers { nodes { usage { calls } } } }')).toBe(true);
    expect(found('{ tools { nodes { server { ...U } } } } fragment U on McpServer { usage { calls } }')).toBe(true);
    expect(
      found('query($r: [_Any!]!) { _entities(representations: $r) { ... on McpServer { usage { calls } } } }'),
    ).toBe(true);
    expect(found('{ mcpServers { nodes { id tools { nodes { usage { calls } } } } } }')).toBe(false);
  });
});

describe('introspection', () => {
  const sizes = introspectionSizes(schema);
  const types = Object.keys(schema.getTypeMap()).length;
  const fieldCounts = Object.values(schema.getTypeMap()).map((t) =>
    isObjectType(t) || isInterfaceType(t) ? Object.keys(t.getFields()).length : 0,
  );
  const fieldsOfAllTypes = fieldCounts.reduce((a, b) => a + b, 0);

  it('lists of the whole schema by their real totals', () => {
    expect(sizes.lists.get('__Schema.types')?.all).toBe(types);
    expect(cost('{ __schema { types { name } } }')).toBe(1 + types);
    expect(cost('{ __schema { types { fields { name } } } }')).toBe(1 + types + fieldsOfAllTypes);
  });

  it('lists of one type by the largest of any type; ofType only as deep as types wrap', () => {
    const maxFields = Math.max(...fieldCounts);
    expect(cost('{ __type(name: "Agent") { fields { name } } }')).toBe(1 + maxFields);
    expect(cost('{ __type(name: "Agent") { ofType { ofType { name } } } }')).toBe(1);
    expect(cost('{ __type(name: "Agent") { fields { type { ofType { ofType { name } } } } } }')).toBe(
      1 + maxFields * (1 + 1 + 1 + 1),
    );
  });

  it('counts aliases inside introspection, not its depth; the standard introspection query fits', () => {
    expect(
      measure(`{ __schema { ${Array.from({ length: 31 }, (_, i) => `t${i}: types { name }`).join(' ')} } }`).aliases,
    ).toBe(31);
    const standard = measure(
      getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        inputValueDeprecation: true,
      }),
    );
    expect(standard.depth).toBe(0);
    expect(standard.cost).toBeGreaterThan(types);
    expect(standard.cost).toBeLessThan(DEFAULT_LIMITS.maxCost);
  });

  it('fields { type { fields } } grows by the largest type at the inner level', () => {
    const maxFields = Math.max(...fieldCounts);
    const nested = '{ __schema { types { fields { type { fields { type { name } } } } } } }';
    expect(cost(nested)).toBe(1 + types + fieldsOfAllTypes * (1 + 1 + maxFields * 2));
    expect(cost(nested)).toBeGreaterThan(DEFAULT_LIMITS.maxCost);
  });
});

describe('nestingDepth', () => {
  it('counts {, [ and ( outside strings, block strings and comments', () => {
    expect(nestingDepth('{ a(b: [[1]]) { c } }')).toBe(4);
    expect(nestingDepth('{ a(b: "{{{{[[[[") }')).toBe(2);
    expect(nestingDepth('{ a(b: "\\"{{{{") }')).toBe(2);
    expect(nestingDepth('{ a(b: """ {{{{ \\""" {{{{ """) }')).toBe(2);
    expect(nestingDepth('{ a # {{{{\n }')).toBe(1);
    // A carriage return ends a comment for GraphQL: what follows it is counted.
    expect(nestingDepth('# c\r{{{ }}}')).toBe(3);
  });
});
