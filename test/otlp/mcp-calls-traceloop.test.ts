/**
 * One MCP call, one tool call, with `@traceloop/instrumentation-mcp`: a real MCP client and server
 * of `@modelcontextprotocol/sdk` in one process (an in-memory transport pair), the client instrumented
 * by Traceloop (its manual API: the project is ESM), an agent loop calling two tools (one failing)
 * inside a skill invocation. Traceloop's client spans (`traceloop.span.kind` `tool`, the tool in
 * `traceloop.entity.name`, kind CLIENT, status ERROR on an isError result) carry no trace context to
 * the server, so the client's transport propagates it as MCP SEP-414 says (`traceparent` in
 * `params._meta`); the server records its span by the MCP semantic conventions. The two
 * "processes" export separately: the client's spans first, sealed, then the server's, then both
 * again. Every statistic counts each call once, with the server's duration. On both engines.
 */
import { McpInstrumentation } from '@traceloop/instrumentation-mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { SpanKind, context, propagation } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { fileDatabase } from '../helpers/pg-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import {
  PLAN,
  SERVER,
  byTool,
  expectCountedOnce,
  expectOneTracePerCall,
  expectToolCalls,
  expectUsage,
  installTracing,
  mcpServer,
  otlpProcess,
  seal,
  serverTool,
  type Process,
} from './mcp-calls.ts';

/** Traceloop's names (`@traceloop/ai-semantic-conventions` SpanAttributes.TRACELOOP_SPAN_KIND, TRACELOOP_ENTITY_NAME). */
const TOOL_KIND = 'traceloop.span.kind';
const TOOL_NAME = 'traceloop.entity.name';

/** SEP-414 on the client's side: each request carries the active trace context in `params._meta`. */
function propagating(transport: Transport): Transport {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if ('method' in message && 'id' in message) {
      const params = (message.params ??= {});
      propagation.inject(context.active(), (params._meta ??= {}));
    }
    return send(message, options);
  };
  return transport;
}

/** The agent: a skill invocation whose loop calls the tools of PLAN over MCP. */
async function agentLoop(agent: Process, server: Process): Promise<void> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcpServer(server.tracer).connect(serverSide);
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await agent.tracer.startActiveSpan(
    'invoke_skill',
    { attributes: { 'gen_ai.operation.name': 'invoke_skill', 'skill.id': 'sk-1' } },
    async (root) => {
      // Traceloop's session span starts here, a child of the invocation; its tool spans are its children.
      await client.connect(propagating(clientSide));
      for (const tool of PLAN) await client.callTool({ name: tool, arguments: { id: 'T-1' } });
      await client.close();
      root.end();
    },
  );
}

// Once per process, as an application would: the Client class is patched where it is defined.
const instrumentation = new McpInstrumentation({ enabled: false });
instrumentation.manuallyInstrument({ Client });
const uninstall = installTracing();
afterAll(() => uninstall());

function suite(engine: string, env: () => Record<string, string>) {
  describe(`an MCP agent traced by Traceloop (${engine})`, () => {
    let t: TestApp;
    let agent: Process;
    let server: Process;
    let from: number;
    beforeAll(async () => {
      t = await startTestApp({ env: env() });
      const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
      const token = await t.token('u-admin');
      agent = otlpProcess('support-agent', url, token);
      server = otlpProcess(SERVER, url, token);
      instrumentation.setTracerProvider(agent.provider);
      from = Math.floor(Date.now() / 1000);
      await agentLoop(agent, server);
    });
    afterAll(async () => {
      await Promise.all([agent.provider.shutdown(), server.provider.shutdown()]);
      await t.close();
    });

    it('counts each call once: the client spans alone (sealed), then with the server spans, then both again', async () => {
      const clients = agent.spans().filter((s) => s.kind === SpanKind.CLIENT && s.attributes[TOOL_KIND] === 'tool');
      expectOneTracePerCall(clients, server.spans());
      // Before the server's spans arrive, Traceloop's count: a tool call each, its error, no server named.
      await agent.flush();
      await expectToolCalls(t, from, agent.spans().length);
      await expectUsage(
        t,
        from,
        byTool(clients, (s) => s.attributes[TOOL_NAME]),
        null,
      );
      await seal(t);
      // Then the server's, with the server's durations; the client spans no longer count as calls.
      await server.flush();
      const spans = agent.spans().length + server.spans().length;
      const served = byTool(server.spans(), serverTool);
      await expectCountedOnce(t, from, spans, served, () => Promise.all([server.resend(), agent.resend()]));
    });
  });
}

suite('embedded', () => ({}));

const server = await fileDatabase('gw_mcp_tl');
if (server !== null) suite('postgres', () => server);
