/**
 * The console and the GraphQL explorer in a real browser (Debian's chromium through
 * playwright-core), against the service started as `npm start` starts it, on the demo data: sign-in
 * from the start-up link's fragment, the explorer running a query with completion from the schema,
 * no request to any other origin, no Content-Security-Policy violation, the JavaScript shipped per
 * page. Screenshots go to reports/screenshots/ (ignored by git).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsoleIfStale } from '../helpers/console-build.ts';
import { freePort, READY_TIMEOUT_MS, waitUntilReady } from '../fixtures/service-process.ts';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.resolve('reports/screenshots');
const available = fs.existsSync(CHROMIUM);
if (!available && process.env.REQUIRE_SERVER_TESTS === '1')
  throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);

let service: ChildProcess;
let origin: string;
let dataDir: string;
let consoleUrl: string;
let browser: Browser;
const requested = new Set<string>();
const cspViolations: string[] = [];

async function newPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('request', (r) => requested.add(new URL(r.url()).origin));
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  return page;
}

type Series = { points: { timestamp_unix_seconds: number; value: number | null }[] }[];
type Plotted = { x: number[]; series: Record<string, (number | null)[]> };

/** What the chart titled `title` plots, as numbers (analytics.ts writes them on the figure). */
async function plotted(page: Page, title: string): Promise<Plotted> {
  const figure = page.locator(`figure.chart[data-title="${title}"]`);
  await figure.waitFor();
  return JSON.parse((await figure.getAttribute('data-plotted')) ?? '{}') as Plotted;
}

/** POST `body` to `path` with the page's token; the answer must be a 200. */
async function post<T>(page: Page, path: string, body: object): Promise<T> {
  const token = await page.evaluate(() => sessionStorage.getItem('gateway.token'));
  const res = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token ?? ''}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

const DAY = 86_400;
const TODAY = Math.floor(Date.now() / 1000 / DAY) * DAY;
const iso = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
/** The custom range the exact comparisons use: 20 days to yesterday (the URL's end day included). */
const [START, END] = [TODAY - 20 * DAY, TODAY - DAY];
const RANGE = `range=custom&start=${iso(START)}&end=${iso(END)}`;

describe.skipIf(!available)('the console in a browser', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    buildConsoleIfStale();
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-browser-'));
    service = spawn(process.execPath, ['src/main.ts'], {
      env: {
        ...process.env,
        NODE_ENV: 'development',
        DATA_DIR: dataDir,
        PORT: String(port),
        DEMO_TRACE_SPANS: '2000',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // The link `npm start` prints, read from the service's own output.
    consoleUrl = await new Promise<string>((resolve, reject) => {
      let out = '';
      service.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const m = /console \(signed in as user-alice\): (\S+)/.exec(out);
        if (m?.[1] !== undefined) resolve(m[1]);
      });
      service.on('exit', (code) => {
        reject(new Error(`the service exited (${code}) before printing the console link:\n${out}`));
      });
    });
    expect(await waitUntilReady(origin, READY_TIMEOUT_MS)).toBe(true);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    fs.mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await (browser as Browser | undefined)?.close();
    (service as ChildProcess | undefined)?.kill('SIGTERM');
  });

  it('signs in from the start-up link: the token leaves the address bar for the tab’s sessionStorage', async () => {
    expect(consoleUrl).toMatch(new RegExp(`^${origin}/console#token=ey`));
    const page = await newPage();
    // Bytes as they crossed the wire (gzip), whether or not the answer had a content-length.
    const scripts: Promise<number>[] = [];
    page.on('response', (r) => {
      if (r.request().resourceType() === 'script')
        scripts.push(
          r
            .request()
            .sizes()
            .then((s) => s.responseBodySize),
        );
    });
    const started = Date.now();
    await page.goto(consoleUrl);
    await page.waitForSelector('table.skills');
    const firstRenderMs = Date.now() - started;
    expect(await page.textContent('header .viewer')).toContain('Signed in as Alice Acme (user) in org-acme');
    expect(page.url()).toBe(`${origin}/console`);
    const token = await page.evaluate(() => sessionStorage.getItem('gateway.token'));
    expect(consoleUrl.endsWith(`#token=${token}`)).toBe(true);
    const shipped = (await Promise.all(scripts)).reduce((a, b) => a + b, 0);
    console.log(
      `console: first render ${firstRenderMs} ms (budget 1,000 ms); JavaScript ${(shipped / 1024).toFixed(1)} KB gzipped (budget 300 KB)`,
    );
    expect(shipped).toBeGreaterThan(0);
    expect(shipped).toBeLessThan(300 * 1024);
    await page.screenshot({ path: path.join(SHOTS, 'console.png') });
    await page.setViewportSize({ width: 390, height: 800 });
    await page.screenshot({ path: path.join(SHOTS, 'console-narrow.png') });
    await page.close();
  });

  it('a link with another token does not switch a signed-in tab without asking', async () => {
    const page = await newPage();
    await page.goto(consoleUrl);
    await page.waitForSelector('table.skills');
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${origin}/console#token=someone-elses-token`);
    await page.waitForSelector('table.skills');
    expect(dialogs).toEqual(['This link signs you in with another credential. Switch to it?']);
    expect(await page.textContent('header .viewer')).toContain('Alice Acme');
    expect(page.url()).toBe(`${origin}/console`);
    await page.close();
  });

  it('without a token the console asks for one, and shows the API’s problem for a bad one', async () => {
    const page = await newPage();
    await page.goto(`${origin}/console`);
    await page.fill('input[name=token]', 'not-a-token');
    await page.click('button[type=submit]');
    await page.waitForSelector('.problem');
    // The problem as the API states it: its code, its detail and the request's trace id.
    expect(await page.textContent('.problem strong')).toBe('token_malformed');
    expect(await page.textContent('.problem')).toContain('the credential is neither a JWT nor');
    expect(await page.textContent('.problem .trace')).toMatch(/^trace id [0-9a-f]{32}$/);
    expect(await page.evaluate(() => sessionStorage.getItem('gateway.token'))).toBeNull();
    await page.screenshot({ path: path.join(SHOTS, 'sign-in.png') });
    await page.close();
  });

  it('the explorer completes from the schema and runs a query with the console’s token', async () => {
    const page = await newPage();
    await page.goto(consoleUrl);
    await page.waitForSelector('header .viewer');
    await page.goto(`${origin}/graphql`);
    const editor = '.graphiql-query-editor .monaco-editor';
    await page.waitForSelector(editor);
    await page.click(editor);
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    // The editor closes the braces itself; the suggestion list comes from the introspected schema.
    await page.keyboard.type('{ viewer { org');
    await page.waitForSelector('.suggest-widget.visible');
    expect(await page.textContent('.suggest-widget')).toContain('orgId');
    await page.keyboard.press('Escape');
    // The query run is set as a whole, so a suggestion popping up on a loaded machine cannot take
    // a keystroke of it.
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('{ viewer { orgId user { id } } }');
    const lines = page.locator(`${editor} .view-lines`);
    await expect.poll(async () => (await lines.textContent())?.replace(/\s+/g, '')).toBe('{viewer{orgIduser{id}}}');
    await page.keyboard.press('Control+Enter');
    await page.locator('.graphiql-response', { hasText: /"(data|errors)"/ }).waitFor();
    const answer = (await page.textContent('.graphiql-response'))?.replace(/\s+/g, '') ?? '';
    expect(answer).toContain('"viewer":{"orgId":"org-acme","user":{"id":"user-alice"}}');
    await page.screenshot({ path: path.join(SHOTS, 'explorer.png') });
    await page.close();
  });

  it('Skills lists the readable skills with their numbers; a skill’s charts plot exactly what the REST endpoint answers', async () => {
    const page = await newPage();
    await page.goto(consoleUrl);
    await page.waitForSelector('table.skills');
    const ids = await page.$$eval('table.skills tbody tr', (rows) => rows.map((r) => r.getAttribute('data-skill')));
    expect(ids).toContain('skill-0001');
    await page.screenshot({ path: path.join(SHOTS, 'skills.png') });

    await page.goto(`${origin}/console/skills/skill-0001?${RANGE}`);
    const shown = await plotted(page, 'Invocations');
    const body = await post<{ data: { series: Series }; comparison: { data: { series: Series } } }>(
      page,
      '/skill/v1/skills/skill-0001/traces/stats/query',
      {
        start_time_unix_seconds: START,
        end_time_unix_seconds: END + DAY,
        request_type: 'time_series',
        compare: 'previous_period',
        queries: [{ name: 'invocations', measure: 'skill_invocations' }],
      },
    );
    const [current] = body.data.series;
    const [previous] = body.comparison.data.series;
    expect(shown.x).toEqual(current?.points.map((p) => p.timestamp_unix_seconds));
    expect(shown.series.invocations).toEqual(current?.points.map((p) => p.value));
    expect(shown.series['invocations (previous)']).toEqual(previous?.points.map((p) => p.value));
    expect(shown.series.invocations?.some((v) => (v ?? 0) > 0)).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, 'skill-analytics.png'), fullPage: true });
    await page.click('button[name=view]');
    await page.waitForSelector('table.numbers');
    await page.screenshot({ path: path.join(SHOTS, 'skill-table.png') });
    await page.close();
  });

  it('Catalog, an agent, Tools and Workspaces answer from the API, and a workspace exports as JSON', async () => {
    const page = await newPage();
    await page.goto(consoleUrl);
    await page.waitForSelector('table.skills');
    await page.click('nav >> text=Agents');
    await page.waitForSelector('ul.cards li');
    await page.fill('input[name=q]', 'invoice');
    await page.click('form.controls button[type=submit]');
    await page.waitForURL(/q=invoice/);
    await page.waitForSelector('ul.cards li');
    const shown = await page.$$eval('ul.cards li', (items) => items.map((i) => i.getAttribute('data-agent')));
    const token = (await page.evaluate(() => sessionStorage.getItem('gateway.token'))) ?? '';
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const search = await fetch(`${origin}/agent/v1/agents/search`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ query: 'invoice', limit: 20 }),
    });
    const restIds = ((await search.json()) as { items: { id: string }[] }).items.map((a) => a.id);
    expect(restIds.length).toBeGreaterThan(0);
    expect(shown).toEqual(restIds);
    await page.screenshot({ path: path.join(SHOTS, 'catalog.png') });
    await page.click('ul.cards li:first-child a');
    await page.waitForSelector('pre.instructions');
    await page.screenshot({ path: path.join(SHOTS, 'agent-profile.png'), fullPage: true });

    await page.click('nav >> text=Tools');
    await page.waitForSelector('table.groups tbody tr');
    await page.waitForSelector('table.servers tbody tr');
    // The MCP servers as the public GraphQL API answers them: names, versions, tool counts and usage.
    const servers = await fetch(`${origin}/graphql`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        query: '{ mcpServers(first: 50) { nodes { id name version tools(first: 0) { totalCount } usage { calls } } } }',
      }),
    });
    type ServerRow = {
      id: string;
      name: string;
      version: string;
      tools: { totalCount: number };
      usage: { calls: number };
    };
    const listed = ((await servers.json()) as { data: { mcpServers: { nodes: ServerRow[] } } }).data.mcpServers.nodes;
    expect(listed.length).toBeGreaterThan(0);
    const rows = await page.$$eval('table.servers tbody tr', (trs) =>
      trs.map((tr) => ({
        id: tr.getAttribute('data-server'),
        cells: [...tr.querySelectorAll('td')].map((td) => td.textContent),
      })),
    );
    expect(rows.map((r) => r.id)).toEqual(listed.map((s) => s.id));
    for (const [i, s] of listed.entries()) {
      const cells = rows[i]?.cells ?? [];
      expect([cells[0], cells[2], cells[4], cells[5]]).toEqual([
        s.name,
        s.version,
        String(s.tools.totalCount),
        s.usage.calls.toLocaleString('en-US'),
      ]);
    }
    expect(listed.some((s) => s.tools.totalCount > 0 && s.usage.calls > 0)).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, 'tools.png') });

    await page.click('nav >> text=Workspaces');
    await page.waitForSelector('li[data-workspace="ws-acme"]');
    const download = page.waitForEvent('download');
    await page.click('button[data-export="ws-acme-platform"]');
    const file = await (await download).path();
    const exported = JSON.parse(fs.readFileSync(file, 'utf8')) as { workspace?: { id: string } };
    const rest = await fetch(`${origin}/registry/v1/workspaces/ws-acme-platform/export`, { headers: auth });
    expect(exported).toEqual(await rest.json());
    await page.screenshot({ path: path.join(SHOTS, 'workspaces.png') });
    await page.close();
  });

  it('an agent’s usage, linked from the catalog, plots what the agent endpoint answers, with its skills and tools', async () => {
    const page = await newPage();
    await page.goto(consoleUrl);
    await page.waitForSelector('table.skills');
    await page.goto(`${origin}/console/catalog?q=invoice`);
    await page.click('ul.cards li[data-agent="agent-0001"] a.usage');
    await page.waitForURL(/\/console\/agents\/agent-0001\/usage$/);
    await plotted(page, 'Traces');
    await page.goto(`${origin}/console/agents/agent-0001/usage?${RANGE}`);
    const traces = await plotted(page, 'Traces');
    const tokens = await plotted(page, 'Tokens');
    const endpoint = '/agent/v1/agents/agent-0001/traces/stats/query';
    const range = { start_time_unix_seconds: START, end_time_unix_seconds: END + DAY };
    const series = await post<{ data: { series: Series } }>(page, endpoint, {
      ...range,
      request_type: 'time_series',
      queries: [
        { name: 'traces', measure: 'traces' },
        { name: 'cache_read', measure: 'cache_read_tokens' },
      ],
    });
    const [tracesRest, cacheRest] = series.data.series;
    expect(traces.x).toEqual(tracesRest?.points.map((p) => p.timestamp_unix_seconds));
    expect(traces.series.traces).toEqual(tracesRest?.points.map((p) => p.value));
    expect(tokens.series.cache_read).toEqual(cacheRest?.points.map((p) => p.value));
    expect(traces.series.traces?.some((v) => (v ?? 0) > 0)).toBe(true);
    expect(tokens.series.cache_read?.some((v) => (v ?? 0) > 0)).toBe(true);

    // The breakdowns: the agent's skills (by name) and tools as the table answers give them.
    type Table = { data: { rows: { groups: Record<string, string>; values: Record<string, number> }[] } };
    const byTool = await post<Table>(page, endpoint, {
      ...range,
      request_type: 'table',
      queries: [{ name: 'calls', measure: 'tool_calls', group_by: ['tool'], filters: [{ key: 'tool', op: 'exists' }] }],
    });
    const cells = (table: string) =>
      page.$$eval(`table.${table} tbody tr`, (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
      );
    const tools = await cells('by-tool');
    expect(tools.map((r) => [r[0], r[1]])).toEqual(
      byTool.data.rows.map((r) => [r.groups.tool, (r.values.calls ?? 0).toLocaleString('en-US')]),
    );
    expect(tools.length).toBeGreaterThan(0);
    const skills = await cells('by-skill');
    const used = await post<{ data: { agent: { usedSkills: { id: string; displayName: string }[] } } }>(
      page,
      '/graphql',
      { query: '{ agent(id: "agent-0001") { usedSkills { id displayName } } }' },
    );
    const [declared] = used.data.agent.usedSkills;
    expect(skills.map((r) => r[0])).toContain(declared?.displayName);
    expect(Number(skills[0]?.[1]?.replace(/,/g, ''))).toBeGreaterThan(0);
    await page.screenshot({ path: path.join(SHOTS, 'agent.png'), fullPage: true });

    // The skill's page grouped by agent names the agents that declare it.
    await page.goto(`${origin}/console/skills/${declared?.id ?? ''}?${RANGE}&group=agent`);
    const byAgent = Object.keys((await plotted(page, 'Invocations')).series);
    expect(byAgent).toContain('invocations agent=Invoice Parser');
    expect(byAgent).not.toContain('invocations agent=agent-0001');
    await page.close();
  });

  it('a user of another organization sees none of the first organization’s skills', async () => {
    const token = execFileSync(
      process.execPath,
      ['src/cli/token.ts', '--sub', 'user-alice-globex', '--org', 'org-globex'],
      {
        env: { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'development' },
      },
    )
      .toString()
      .trim();
    const page = await newPage();
    await page.goto(`${origin}/console#token=${token}`);
    await page.waitForSelector('table.skills, p.empty');
    expect(await page.textContent('header .viewer')).toContain('in org-globex');
    const ids = await page.$$eval('table.skills tbody tr', (rows) => rows.map((r) => r.getAttribute('data-skill')));
    expect(ids).not.toContain('skill-0001');
    await page.goto(`${origin}/console/skills/skill-0001`);
    await page.waitForSelector('.problem');
    expect(await page.textContent('.problem strong')).toBe('Not found');
    await page.close();
  });

  it('asked nothing of any other origin, and broke no Content-Security-Policy rule', () => {
    expect([...requested]).toEqual([origin]);
    expect(cspViolations).toEqual([]);
  });
});
