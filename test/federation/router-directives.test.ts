/**
 * The directives a router enforces from our SDL: both composers (@apollo/composition and
 * @theguild/federation-composition) accept them beside a foreign subgraph, `@listSize` checks
 * included; every entry point needs an authenticated caller; the policies are the documented
 * ones; the list sizes are our cost model's; the partner contract shows what it should.
 */
import { composeServices as apolloCompose } from '@apollo/composition';
import { composeSchemaContract, composeServices as hiveCompose } from '@theguild/federation-composition';
import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  parse,
  valueFromASTUntyped,
  type DocumentNode,
  type GraphQLField,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/graphql/limits/limits-plugin.ts';
import { unpagedLists } from '../../src/graphql/limits/list-budget.ts';
import { BOUNDED_LISTS, PAGE_SIZES } from '../../src/graphql/limits/page-sizes.ts';
import { SETTING_COUNT } from '../../src/insights/settings.ts';
import { buildRegistrySubgraph } from '../../src/graphql/schema.ts';
import { loadTypeDefs } from '../../src/graphql/type-defs.ts';

/** A foreign subgraph on federation v2.9 that extends two of our entities and prices its own list. */
const foreign = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@shareable", "@listSize", "@cost"])
  type Agent @key(fields: "id") { id: ID! reviews: [Review!]! @listSize(assumedSize: 5) }
  type McpServer @key(fields: "id") { id: ID! approvedBy: String! @cost(weight: 2) }
  type Review { rating: Int! }
  type PageInfo @shareable { hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String endCursor: String }
  type Query { featuredAgents: [Agent]! @listSize(assumedSize: 3) }
`);

const services = (registry: DocumentNode) => [
  { name: 'registry', typeDefs: registry, url: 'http://127.0.0.1:1/graphql' },
  { name: 'reviews', typeDefs: foreign, url: 'http://127.0.0.1:2/graphql' },
];

const schema = buildRegistrySubgraph();
const query = schema.getQueryType();
if (query === null || query === undefined) throw new Error('no Query');
/** Root fields of our SDL (the subgraph library's `_entities` and `_service` are not ours to direct). */
const rootFields = Object.values(query.getFields()).filter((f) => !f.name.startsWith('_'));
const entityTypes = Object.values(schema.getTypeMap()).filter(
  (t) => isObjectType(t) && t.astNode?.directives?.some((d) => d.name.value === 'key'),
);

type Directed = Parameters<typeof directivesOf>[0];
function directivesOf(element: {
  astNode?: { directives?: readonly { name: { value: string } }[] | undefined } | null | undefined;
}) {
  return (element.astNode?.directives ?? []).map((d) => d.name.value);
}
function argOf(element: Directed, directive: string, arg: string): unknown {
  const d = (element.astNode?.directives ?? []).find((x) => x.name.value === directive) as
    | { arguments?: readonly { name: { value: string }; value: Parameters<typeof valueFromASTUntyped>[0] }[] }
    | undefined;
  const a = d?.arguments?.find((x) => x.name.value === arg);
  return a === undefined ? undefined : valueFromASTUntyped(a.value);
}

describe('composition', () => {
  it('@apollo/composition: no errors, no hints', () => {
    const result = apolloCompose(services(loadTypeDefs()));
    expect(result.errors?.map((e) => e.message)).toBeUndefined();
    expect((result.hints ?? []).map((h) => h.message)).toEqual([]);
    // @inaccessible: in the supergraph, out of its API schema.
    expect(result.supergraphSdl).toContain('apiKey');
    expect(result.schema?.toAPISchema().toGraphQLJSSchema().getType('AgentIdentity')?.toString()).toBe('AgentIdentity');
    const api = result.schema?.toAPISchema().toGraphQLJSSchema();
    const identity = api?.getType('AgentIdentity');
    expect(identity !== undefined && isObjectType(identity) ? Object.keys(identity.getFields()) : []).not.toContain(
      'apiKey',
    );
  });

  it('@theguild/federation-composition: no errors', () => {
    const result = hiveCompose(services(loadTypeDefs()));
    expect(result.errors?.map((e) => e.message)).toBeUndefined();
    expect(result.publicSdl).not.toMatch(/^\s+apiKey:/m);
  });

  it('both check @listSize: a sized field that is not a list, a slicing argument that does not exist', () => {
    const broken = (from: string, to: string) => {
      const sdl = loadTypeDefs().loc?.source.body ?? '';
      expect(sdl).toContain(from);
      return parse(sdl.replace(from, to));
    };
    const notAList = broken('sizedFields: ["edges", "nodes"]', 'sizedFields: ["edges", "totalCount"]');
    const noSuchArgument = broken('slicingArguments: ["first"]', 'slicingArguments: ["last"]');
    for (const doc of [notAList, noSuchArgument]) {
      expect(apolloCompose(services(doc)).errors?.length ?? 0).toBeGreaterThan(0);
      expect(hiveCompose(services(doc)).errors?.length ?? 0).toBeGreaterThan(0);
    }
  });
});

describe('authentication and policies', () => {
  it('every root field and entity type needs an authenticated caller (the service authenticates all of /graphql)', () => {
    expect(rootFields.length).toBeGreaterThan(15);
    expect(rootFields.filter((f) => !directivesOf(f).includes('authenticated')).map((f) => f.name)).toEqual([]);
    // The mutations too, each with registry.read: whether the caller administers the workspace is the subgraph's to decide.
    const mutations = Object.values(schema.getMutationType()?.getFields() ?? {});
    expect(mutations.map((f) => f.name).sort()).toEqual([
      'createWebhookSubscription',
      'deleteWebhookSubscription',
      'setInsightSettings',
    ]);
    for (const f of mutations) {
      expect([f.name, directivesOf(f)]).toEqual([f.name, ['authenticated', 'policy']]);
      expect(JSON.stringify(argOf(f, 'policy', 'policies'))).toBe('[["registry.read"]]');
    }
    expect(entityTypes.map((t) => t.name).sort()).toEqual([
      'Agent',
      'McpServer',
      'Project',
      'Repo',
      'Skill',
      'Tool',
      'User',
      'Workspace',
    ]);
    expect(entityTypes.filter((t) => !directivesOf(t).includes('authenticated')).map((t) => t.name)).toEqual([]);
  });

  it('policies: directory.read for people, registry.read for what workspaces hold; only viewer and insightSchemas need neither', () => {
    const policyOf = (element: Directed) => JSON.stringify(argOf(element, 'policy', 'policies') ?? null);
    const byPolicy = (elements: readonly (Directed & { name: string })[]) =>
      Object.fromEntries(elements.map((e) => [e.name, policyOf(e)]));
    const roots = byPolicy(rootFields);
    expect(Object.entries(roots).filter(([, p]) => p === 'null')).toEqual([
      ['viewer', 'null'],
      ['insightSchemas', 'null'],
    ]);
    expect(roots.users).toBe('[["directory.read"]]');
    expect(roots.user).toBe('[["directory.read"]]');
    const others = Object.entries(roots).filter(([name, p]) => p !== 'null' && name !== 'users' && name !== 'user');
    expect(others.every(([, p]) => p === '[["registry.read"]]')).toBe(true);
    expect(byPolicy(entityTypes)).toEqual({
      Agent: '[["registry.read"]]',
      Tool: '[["registry.read"]]',
      Skill: '[["registry.read"]]',
      McpServer: '[["registry.read"]]',
      Workspace: '[["registry.read"]]',
      Project: '[["registry.read"]]',
      Repo: '[["registry.read"]]',
      User: '[["directory.read"]]',
    });
  });
});

describe('list sizes are the cost model`s', () => {
  const fields = Object.values(schema.getTypeMap())
    .filter((t) => isObjectType(t) && !t.name.startsWith('_'))
    .flatMap((t) =>
      Object.values((t as { getFields(): Record<string, GraphQLField<unknown, unknown>> }).getFields()).map(
        (f) => [`${t.name}.${f.name}`, f] as const,
      ),
    );
  const field = (coordinate: string) => fields.find(([c]) => c === coordinate)?.[1];

  it('paged fields: their handler default as assumedSize and as the default of first, sliced by first, sizing edges and nodes', () => {
    for (const [coordinate, size] of Object.entries(PAGE_SIZES)) {
      const f = field(coordinate);
      if (f === undefined) throw new Error(coordinate);
      expect([coordinate, argOf(f, 'listSize', 'assumedSize')]).toEqual([coordinate, size.default]);
      // A router that reads only the arguments (Hive Gateway) finds the default page there.
      expect([coordinate, f.args.find((a) => a.name === 'first')?.defaultValue]).toEqual([coordinate, size.default]);
      expect(argOf(f, 'listSize', 'slicingArguments')).toEqual(['first']);
      expect(argOf(f, 'listSize', 'sizedFields')).toEqual(['edges', 'nodes']);
      expect(argOf(f, 'listSize', 'requireOneSlicingArgument')).toBe(false);
    }
    const paged = fields.filter(([, f]) => f.args.some((a) => a.name === 'first')).map(([c]) => c);
    expect(paged.sort()).toEqual(Object.keys(PAGE_SIZES).sort());
  });

  const isObjectList = (f: GraphQLField<unknown, unknown>) =>
    isListType(getNullableType(f.type)) && isCompositeType(getNamedType(f.type));
  const STATS_ANSWER = /^(ScalarStats|TableStats|TimeSeriesStats|StatsSeries|TraceStatsMeta)\./;

  it('every other list of objects, the unpaged lists of the list budget among them: our default list size', () => {
    const others = fields.filter(
      ([c, f]) =>
        isObjectList(f) &&
        !(c in PAGE_SIZES) &&
        !(c in BOUNDED_LISTS) &&
        !/Connection\.(edges|nodes)$/.test(c) &&
        !STATS_ANSWER.test(c) &&
        c !== 'Query._entities',
    );
    expect([...others.map(([c]) => c), ...Object.keys(BOUNDED_LISTS)]).toEqual(
      expect.arrayContaining(unpagedLists(schema)),
    );
    expect(others.length).toBeGreaterThan(20);
    expect(others.map(([c, f]) => [c, argOf(f, 'listSize', 'assumedSize')])).toEqual(
      others.map(([c]) => [c, DEFAULT_LIMITS.defaultListSize]),
    );
  });

  it('unpaged lists with an enforced bound: that bound as assumedSize', () => {
    const bounded = Object.entries(BOUNDED_LISTS);
    expect(
      bounded.map(([c]) => [c, argOf(field(c) as GraphQLField<unknown, unknown>, 'listSize', 'assumedSize')]),
    ).toEqual(bounded);
    expect(BOUNDED_LISTS).toEqual({
      'Workspace.webhookSubscriptions': 20,
      'WebhookSubscription.subjects': 50,
      'Workspace.insightSettings': SETTING_COUNT,
      'InsightSettings.settings': SETTING_COUNT,
    });
    expect(SETTING_COUNT).toBe(20);
  });

  it('a statistics answer is priced by its field (our points), its parts at weight 0', () => {
    const parts = fields.filter(([c, f]) => isObjectList(f) && STATS_ANSWER.test(c));
    expect(parts.length).toBe(5);
    expect(parts.map(([c, f]) => [c, argOf(f, 'cost', 'weight')])).toEqual(parts.map(([c]) => [c, 0]));
    for (const stats of ['Skill.traceStats', 'Agent.traceStats'])
      expect(argOf(field(stats) as Directed, 'cost', 'weight')).toBe(0);
  });
});

describe('the partner contract: @tag(name: "public")', () => {
  const contract = composeSchemaContract(
    services(loadTypeDefs()),
    { include: new Set(['public']), exclude: new Set() },
    true,
  );

  it('composes, with agents, skills, tools and MCP servers', () => {
    expect(contract.errors?.map((e) => e.message)).toBeUndefined();
    const sdl = contract.publicSdl ?? '';
    for (const root of [
      'agent(',
      'tool(',
      'skill(',
      'mcpServer(',
      'agentSearch(',
      'tools(',
      'mcpServers(',
      'insightSchemas',
    ])
      expect(sdl).toContain(`  ${root}`);
    for (const type of ['type Agent ', 'type Tool ', 'type Skill ', 'type McpServer ']) expect(sdl).toContain(type);
  });

  it('without people, memberships, workspaces, permissions or telemetry', () => {
    const sdl = contract.publicSdl ?? '';
    for (const hidden of [
      /^type (User|Member|Workspace|Project|Repo|Viewer) /m,
      /^\s+(users|user|viewer|workspace|toolAggregate|artifact)[(:]/m,
      /^\s+(creator|createdBy|updatedBy|permissions|workspaceId|traceStats|usage|identity|relationships)[(:]/m,
      /^\s+(insights|webhookSubscriptions|createWebhookSubscription|deleteWebhookSubscription)[(:]/m,
      /^\s+(insightSettings|setInsightSettings)[(:]/m,
      /^type (Mutation|Insight|WebhookSubscription|InsightSetting|InsightSettings) /m,
    ])
      expect([String(hidden), hidden.test(sdl)]).toEqual([String(hidden), false]);
  });
});
