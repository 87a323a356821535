/**
 * One MCP call, one tool call, with `@arizeai/openinference-instrumentation-mcp`: a real MCP
 * client and server of `@modelcontextprotocol/sdk` in one process over Streamable HTTP (a session
 * id, as a remote server has), both transports instrumented by OpenInference (its manual API: the
 * project is ESM). That instrumentation records no span: it propagates the trace context in
 * `params._meta` (MCP SEP-414) and restores it around the server's handling. The agent loop, as
 * an OpenInference-instrumented framework does, records each call as a TOOL span
 * (`openinference.span.kind`, `tool.name`); the server records its span by the MCP semantic
 * conventions. The two "processes" export separately: the server's spans first, sealed, then the
 * agent's, then both again. Every statistic counts each call once, with the server's duration. On
 * both engines.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MCPInstrumentation } from '@arizeai/openinference-instrumentation-mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as clientHttp from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as serverHttp from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileDatabase } from '../helpers/pg-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import {
  PLAN,
  SERVER,
  byTool,
  expectCountedOnce,
  expectOneTracePerCall,
  expectUsage,
  installTracing,
  mcpServer,
  otlpProcess,
  seal,
  serverTool,
  type Process,
} from './mcp-calls.ts';

/**
 * OpenInference's names (github.com/Arize-ai/openinference, spec/semantic_conventions.md;
 * `@arizeai/openinference-semantic-conventions` SemanticConventions.OPENINFERENCE_SPAN_KIND,
 * TOOL_NAME, INPUT_VALUE).
 */
const OI = { SPAN_KIND: 'openinference.span.kind', TOOL_NAME: 'tool.name', INPUT_VALUE: 'input.value' } as const;

// Once per process, as an application would: the transport classes are patched where they are defined.
new MCPInstrumentation({ instrumentationConfig: { enabled: false } }).manuallyInstrument({
  clientStreamableHTTPModule: clientHttp,
  serverStreamableHTTPModule: serverHttp,
});
const uninstall = installTracing();
afterAll(() => uninstall());

/** The MCP server on an HTTP port of its own, one session. */
async function serve(server: Process): Promise<{ url: URL; close(): Promise<void> }> {
  const transport = new serverHttp.StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  const mcp = mcpServer(server.tracer);
  await mcp.connect(transport);
  const http: HttpServer = createServer((req, res) => void transport.handleRequest(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`),
    async close() {
      await mcp.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** The agent: a skill invocation whose loop calls the tools of PLAN, each call a TOOL span. */
async function agentLoop(agent: Process, url: URL): Promise<void> {
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await agent.tracer.startActiveSpan(
    'invoke_skill',
    { attributes: { 'gen_ai.operation.name': 'invoke_skill', 'skill.id': 'sk-1' } },
    async (root) => {
      await client.connect(new clientHttp.StreamableHTTPClientTransport(url));
      for (const tool of PLAN) {
        const args = { id: 'T-1' };
        await agent.tracer.startActiveSpan(
          tool,
          { attributes: { [OI.SPAN_KIND]: 'TOOL', [OI.TOOL_NAME]: tool, [OI.INPUT_VALUE]: JSON.stringify(args) } },
          async (span) => {
            const result = await client.callTool({ name: tool, arguments: args });
            if (result.isError === true) span.setStatus({ code: SpanStatusCode.ERROR });
            span.end();
          },
        );
      }
      await client.close();
      root.end();
    },
  );
}

function suite(engine: string, env: () => Record<string, string>) {
  describe(`an MCP agent traced with OpenInference (${engine})`, () => {
    let t: TestApp;
    let agent: Process;
    let server: Process;
    let from: number;
    beforeAll(async () => {
      t = await startTestApp({ env: env() });
      const gateway = await t.app.listen({ host: '127.0.0.1', port: 0 });
      const token = await t.token('u-admin');
      agent = otlpProcess('support-agent', gateway, token);
      server = otlpProcess(SERVER, gateway, token);
      const mcp = await serve(server);
      from = Math.floor(Date.now() / 1000);
      await agentLoop(agent, mcp.url).finally(() => mcp.close());
    });
    afterAll(async () => {
      await Promise.all([agent.provider.shutdown(), server.provider.shutdown()]);
      await t.close();
    });

    it('counts each call once: the server spans first (sealed), then the agent spans, then both again', async () => {
      const clients = agent.spans().filter((s) => s.attributes[OI.SPAN_KIND] === 'TOOL');
      expectOneTracePerCall(clients, server.spans());
      // A remote MCP server's session: both sides could also pair by it without propagation.
      expect(new Set(server.spans().map((s) => s.attributes['mcp.session.id'])).size).toBe(1);
      const served = byTool(server.spans(), serverTool);
      // The server's spans alone: its calls count for its tools (the trace is not the skill's yet).
      await server.flush();
      await expectUsage(t, from, served, SERVER);
      await seal(t);
      // Then the agent's: the TOOL spans no longer count as calls; the skill counts the server's.
      await agent.flush();
      const spans = agent.spans().length + server.spans().length;
      await expectCountedOnce(t, from, spans, served, () => Promise.all([agent.resend(), server.resend()]));
    });
  });
}

suite('embedded', () => ({}));

const server = await fileDatabase('gw_mcp_oi');
if (server !== null) suite('postgres', () => server);
