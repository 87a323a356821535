/**
 * Operations whose cost a router's estimate and our cost model should agree on: lists, nesting,
 * `traceStats`, `_entities` and MCP servers among them. Priced from the SDL by cost-agreement.test.ts
 * and by Hive Gateway's demand control in hive-gateway.test.ts.
 */
import { getOperationAST, Kind, parse, validate, type FragmentDefinitionNode } from 'graphql';
import { analyzeOperation } from '../../src/graphql/limits/analyze-operation.ts';
import { DEFAULT_LIMITS } from '../../src/graphql/limits/limits-plugin.ts';
import { buildRegistrySubgraph } from '../../src/graphql/schema.ts';

const schema = buildRegistrySubgraph();

/** Our cost of an operation on the subgraph's schema: what its operation limits measure. */
export function ourCost(query: string, variables: Record<string, unknown> = {}): number {
  const doc = parse(query);
  const errors = validate(schema, doc);
  if (errors.length > 0) throw new Error(`invalid operation: ${errors.map((e) => e.message).join('; ')}`);
  const operation = getOperationAST(doc);
  if (!operation) throw new Error('no operation');
  const fragments = doc.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION);
  return analyzeOperation(schema, operation, fragments, variables, DEFAULT_LIMITS).cost;
}

export const DAY = 86_400;
export const START = 1_767_225_600;
export const scalar = (queries: number) =>
  `{ startTimeUnixSeconds: ${START}, endTimeUnixSeconds: ${START + 7 * DAY}, requestType: SCALAR, queries: [${Array.from(
    { length: queries },
    (_, i) => `{ name: "q${i}", measure: SPANS }`,
  ).join(', ')}] }`;
export const SCALAR_SELECTION = 'data { ... on ScalarStats { results { queryName value unit } } } meta { warnings }';
const reps = (typename: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ __typename: typename, id: `${typename.toLowerCase()}-${i}` }));

/** [name, operation, variables]. */
export const COST_OPERATIONS: readonly (readonly [string, string, Record<string, unknown>])[] = [
  ['tool list, default page', '{ tools { totalCount nodes { id name } } }', {}],
  [
    'tool list, first 30, edges and nodes',
    '{ tools(first: 30) { edges { cursor node { id } } nodes { id } pageInfo { hasNextPage } } }',
    {},
  ],
  ['agent search, default page', '{ agentSearch(query: "invoice") { nodes { id name } } }', {}],
  ['agent search, first from a variable', 'query($n: Int) { agentSearch(first: $n) { nodes { id } } }', { n: 7 }],
  [
    'agent search, sorts (free arguments)',
    '{ agentSearch(first: 10, sorts: [{ field: NAME }, { field: CREATED_AT, direction: DESC }]) { nodes { id } } }',
    {},
  ],
  [
    'nested agentSearch(first: 50), the bench query',
    '{ agentSearch(first: 50) { totalCount edges { node { id name workspace { id displayName } usedTools { id name } usedSkills { id } creator { id name } } } } }',
    {},
  ],
  ['users, nested artifacts pages', '{ users(first: 4) { nodes { id artifacts(first: 3) { nodes { id } } } } }', {}],
  ['workspace subtree of children', '{ workspace(id: "w") { subtree { id children { id } } } }', {}],
  [
    'workspace export',
    '{ workspace(id: "w") { subtree { id } projects { id artifacts { totalCount } } repos { id } members { role user { id } } artifacts(first: 100) { nodes { id kind } } } }',
    {},
  ],
  [
    'viewer workspaces and their artifacts',
    '{ viewer { kind workspaces { id artifacts(kind: SKILL, first: 100) { edges { node { id name } } } } } }',
    {},
  ],
  [
    'one agent with its edges',
    '{ agent(id: "a") { id name card profileImage { contentType } usedTools { id } usedSkills { id } versions { id } relationships { count incoming { relType from { id } } outgoing { to { id } } } } }',
    {},
  ],
  [
    'tool aggregate with filters',
    '{ toolAggregate(groupBy: [SERVER_ID], filters: { owner: ["a", "b"], isSystem: false }, first: 20) { totalCount nodes { key { serverId } count servers } } }',
    {},
  ],
  [
    'tool usage over a page of tools',
    '{ tools(first: 100) { nodes { id usage(since: 1767225600) { calls errorRate } } } }',
    {},
  ],
  [
    'traceStats, one skill, a scalar of 3',
    `{ skill(id: "s") { traceStats(input: ${scalar(3)}) { ${SCALAR_SELECTION} } } }`,
    {},
  ],
  [
    'traceStats, a scalar of 20 queries',
    `{ skill(id: "s") { traceStats(input: ${scalar(20)}) { ${SCALAR_SELECTION} } } }`,
    {},
  ],
  [
    'traceStats under a page of agents and their skills',
    `{ agentSearch(first: 3) { nodes { usedSkills { traceStats(input: ${scalar(2)}) { meta { warnings } } } } } }`,
    {},
  ],
  [
    'traceStats from a variable, the console skills page',
    'query($s: TraceStatsInput!) { viewer { workspaces { id artifacts(kind: SKILL, first: 100) { edges { node { id ... on Skill { traceStats(input: $s) { data { ... on ScalarStats { results { value } } } } } } } } } } }',
    {
      s: {
        startTimeUnixSeconds: START,
        endTimeUnixSeconds: START + 7 * DAY,
        requestType: 'SCALAR',
        queries: [
          { name: 'inv', measure: 'SKILL_INVOCATIONS', filters: [{ key: 'HARNESS', op: 'EQ', value: 'claude_code' }] },
          { name: 'err', measure: 'ERROR_RATE' },
          { name: 'p99', measure: 'LATENCY_P99' },
        ],
      },
    },
  ],
  [
    'traceStats, a table without groups',
    `{ skill(id: "s") { traceStats(input: { startTimeUnixSeconds: ${START}, endTimeUnixSeconds: ${START + 30 * DAY}, requestType: TABLE, queries: [{ name: "a", measure: TOKENS }, { name: "b", measure: COST }] }) { data { ... on TableStats { rows { values } } } } } }`,
    {},
  ],
  [
    '_entities: 3 agents with workspace',
    'query($r: [_Any!]!) { _entities(representations: $r) { ... on Agent { id workspace { id } usedTools { id } } } }',
    { r: reps('Agent', 3) },
  ],
  [
    '_entities: 25 repos with artifacts',
    'query($r: [_Any!]!) { _entities(representations: $r) { ... on Repo { id name artifacts(first: 5) { nodes { id } } } } }',
    { r: reps('Repo', 25) },
  ],
  [
    '_entities: mixed tools and servers',
    'query($r: [_Any!]!) { _entities(representations: $r) { ... on Tool { id server { id } } ... on McpServer { id versions { version } } } }',
    { r: [...reps('Tool', 4), ...reps('McpServer', 2)] },
  ],
  [
    'Agent.traceStats, a scalar of 4, on agents of _entities',
    `query($r: [_Any!]!) { _entities(representations: $r) { ... on Agent { id traceStats(input: ${scalar(4)}) { ${SCALAR_SELECTION} } } } }`,
    { r: reps('Agent', 3) },
  ],
  ['MCP servers, default page', '{ mcpServers { nodes { id name version status } } }', {}],
  [
    'MCP servers with packages, tools and usage',
    '{ mcpServers(first: 5, search: "git") { pageInfo { hasNextPage endCursor } nodes { id packages { registryType identifier } remotes { url } tools(first: 3) { totalCount nodes { name } } usage { calls errorRate } } } }',
    {},
  ],
  [
    'MCP server by id with versions and tools',
    '{ mcpServer(id: "s") { id versions { version isLatest } tools { nodes { id usedBy { id } } } } }',
    {},
  ],
  ['insight schemas', '{ insightSchemas { name version schema } }', {}],
  [
    'a skill’s insights, default page, subjects resolved',
    '{ skill(id: "s") { insights(kind: [COST_SPIKE, LATENCY_REGRESSION]) { nodes { id kind payload window { endTimeUnixSeconds } subject { type skill { id } } } } } }',
    {},
  ],
  [
    'a workspace’s insight feed, first 50 with edges',
    'query($n: Int) { workspace(id: "w") { insights(first: $n, since: 1767225600) { edges { cursor node { id } } pageInfo { hasNextPage } } } }',
    { n: 50 },
  ],
  [
    'a workspace’s webhook subscriptions',
    '{ workspace(id: "w") { webhookSubscriptions { id url kinds subjects { type id } } } }',
    {},
  ],
  [
    'a workspace’s insight settings, and its children’s',
    '{ workspace(id: "w") { insightSettings { name value overridden oneOf } children { insightSettings { name } } } }',
    {},
  ],
  [
    'fragments spread twice',
    '{ a: viewer { ...W } b: viewer { ...W } } fragment W on Viewer { workspaces { id parent { id } } }',
    {},
  ],
];
