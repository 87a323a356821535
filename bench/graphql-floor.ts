/**
 * The executor's share of a GraphQL read, measured apart: graphql-js executing the same document
 * over the read's own answer as plain objects (the subgraph's SDL without resolvers: no store, no
 * loaders, no authorization, no HTTP, every value synchronous), then serializing the result, as
 * any server must. A replica's event loop runs this for every request, so 1000 / (its ms) bounds
 * the requests per second any implementation on graphql-js can answer, whatever the store does.
 *
 * A worker script (harness.ts `inWorker`): it keeps the CPU for seconds, which on the server's
 * event loop would trip the load shedder. workerData `{ query, answer }`; posts the milliseconds.
 */
import { buildSubgraphSchema } from '@apollo/subgraph';
import { execute, isAbstractType, parse, type GraphQLSchema } from 'graphql';
import { parentPort, workerData } from 'node:worker_threads';
import { loadTypeDefs } from '../src/graphql/type-defs.ts';

let schema: GraphQLSchema | undefined;

/** The subgraph's types, fields resolved by name; an abstract value takes its type's first implementation. */
function plainSchema(): GraphQLSchema {
  if (schema !== undefined) return schema;
  const built = buildSubgraphSchema([{ typeDefs: loadTypeDefs() }]);
  for (const type of Object.values(built.getTypeMap())) {
    if (isAbstractType(type) && !type.name.startsWith('_'))
      type.resolveType = () => built.getPossibleTypes(type)[0]?.name;
  }
  schema = built;
  return built;
}

/**
 * The least CPU milliseconds (the most favourable round) of one execution plus serialization of `query` over `answer` (the
 * `data` the gateway answered); throws unless the execution reproduces that answer exactly. Each
 * round runs for at least `roundMs` of CPU, so a coarse thread clock still reads it well.
 */
function executorMs(query: string, answer: unknown, rounds = 7, roundMs = 200): number {
  const document = parse(query);
  const plain = plainSchema();
  const run = () => {
    const result = execute({ schema: plain, document, rootValue: answer });
    if (result instanceof Promise) throw new Error('a plain execution went asynchronous');
    return JSON.stringify(result);
  };
  const expected = JSON.stringify({ data: answer });
  if (run() !== expected) throw new Error('graphql-js over the plain answer does not reproduce it');
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const used = process.threadCpuUsage(since);
    return (used.user + used.system) / 1000;
  };
  const times: number[] = [];
  for (let r = 0; r <= rounds; r++) {
    const start = process.threadCpuUsage();
    let runs = 0;
    do {
      for (let i = 0; i < 16; i++) run(); // the clock read between batches, not between runs
      runs += 16;
    } while (cpuMs(start) < roundMs);
    if (r > 0) times.push(cpuMs(start) / runs); // the first round warms up
  }
  return Math.min(...times);
}

const { query, answer } = workerData as { query: string; answer: unknown };
parentPort?.postMessage(executorMs(query, answer));
