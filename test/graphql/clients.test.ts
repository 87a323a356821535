/**
 * The graph from the GraphQL clients frontends use, over real HTTP: graphql-request, urql (which
 * sends short queries as GET) and Apollo Client; and the standard introspection query that IDEs and
 * codegen tools load the schema with.
 */
import { ApolloClient, HttpLink, InMemoryCache, gql, type TypedDocumentNode } from '@apollo/client';
import { Client, fetchExchange } from '@urql/core';
import { getIntrospectionQuery, type IntrospectionQuery } from 'graphql';
import { GraphQLClient } from 'graphql-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
let url: string;
let authorization: string;

beforeAll(async () => {
  t = await startTestApp();
  const origin = await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `${origin}/graphql`;
  authorization = (await t.auth('u-admin')).authorization;
});
afterAll(async () => {
  await t.close();
});

const VIEWER = `query Viewer { viewer { orgId kind } }`;

describe('real GraphQL clients', () => {
  it('graphql-request loads the schema with the standard introspection query', async () => {
    const client = new GraphQLClient(url, { headers: { authorization } });
    const schema = await client.request<IntrospectionQuery>(getIntrospectionQuery());
    const agentSort = schema.__schema.types.find((type) => type.name === 'AgentSort');
    expect(agentSort?.kind).toBe('INPUT_OBJECT');
    expect(schema.__schema.queryType.name).toBe('Query');
    expect(await client.request(VIEWER)).toEqual({ viewer: { orgId: 'org-a', kind: 'USER' } });
  });

  it('urql, whose short queries are GET requests, is answered (the bearer header forces a preflight)', async () => {
    let method = '';
    const client = new Client({
      url,
      exchanges: [fetchExchange],
      preferGetMethod: true,
      fetchOptions: { headers: { authorization } },
      fetch: (input, init) => {
        method = init?.method ?? 'GET';
        return fetch(input, init);
      },
    });
    const result = await client.query(VIEWER, {}).toPromise();
    expect(method).toBe('GET');
    expect(result.error).toBeUndefined();
    expect(result.data).toEqual({ viewer: { orgId: 'org-a', kind: 'USER' } });
  });

  it('a simple GET (no Authorization, as a cross-site page could send) is refused before it runs', async () => {
    const res = await fetch(`${url}?query=${encodeURIComponent(VIEWER)}`);
    expect(res.status).toBe(401);
    const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]?.extensions.code).toBe('token_missing');
  });

  it('Apollo Client', async () => {
    const client = new ApolloClient({
      link: new HttpLink({ uri: url, headers: { authorization } }),
      cache: new InMemoryCache(),
    });
    const query: TypedDocumentNode<{ viewer: { orgId: string; kind: string } }> = gql(VIEWER);
    const { data } = await client.query({ query, fetchPolicy: 'no-cache' });
    expect(data?.viewer).toMatchObject({ orgId: 'org-a', kind: 'USER' });
  });
});
