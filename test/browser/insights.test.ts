/**
 * Insights on the console in a real browser (Debian's chromium through playwright-core), against
 * the service started as `npm start` starts it, on the demo data (whose first start records a few
 * insights beside its telemetry): the skill and agent pages mark each insight of their range on the
 * chart of its kind and list them below, exactly those the REST list answers; the feed page lists
 * the workspace's insights as `Workspace.insights` answers them, links their subjects and filters
 * by kind. Screenshots go to reports/screenshots/ (ignored by git).
 */
import { spawn, type ChildProcess } from 'node:child_process';
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
let consoleUrl: string;
let browser: Browser;
let token: string;

const DAY = 86_400;
const TODAY = Math.floor(Date.now() / 1000 / DAY) * DAY;
const iso = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
/** 20 days to yesterday (the URL's end day included): the range ends at today's start. */
const [START, END] = [TODAY - 20 * DAY, TODAY];
const RANGE = `range=custom&start=${iso(START)}&end=${iso(END - DAY)}`;

interface Item {
  id: string;
  kind: string;
  window: { start_time_unix_seconds: number; end_time_unix_seconds: number };
}

async function api<T>(pathname: string, body?: object): Promise<T> {
  const res = await fetch(`${origin}${pathname}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

/** The REST list's insights whose window meets the range, newest first. */
async function inRange(pathname: string): Promise<Item[]> {
  const page = await api<{ items: Item[] }>(`${pathname}?since=${START}&limit=100`);
  return page.items.filter((i) => i.window.start_time_unix_seconds < END);
}

/** The insight ids each chart marks, by title. */
async function marked(page: Page): Promise<Record<string, string[]>> {
  await page.locator('figure.chart').first().waitFor();
  return page.$$eval('figure.chart', (figures) =>
    Object.fromEntries(
      figures.map((f) => [
        f.getAttribute('data-title'),
        JSON.parse(f.getAttribute('data-insights') ?? '[]') as string[],
      ]),
    ),
  );
}

/**
 * The API's answer and the page shown from the same data: detection may record insights while the
 * test runs, so the page is loaded again until the answer read before and after it is the same.
 */
async function settled<T>(answer: () => Promise<T>, load: () => Promise<void>): Promise<T> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = JSON.stringify(await answer());
    await load();
    const after = await answer();
    if (JSON.stringify(after) === before) return after;
  }
  throw new Error('insights kept arriving during five loads of the page');
}

const listed = (page: Page) =>
  page.$$eval('table.insights tbody tr', (rows) => rows.map((r) => r.getAttribute('data-insight')));

describe.skipIf(!available)('insights on the console in a browser', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    buildConsoleIfStale();
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-browser-insights-'));
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
    token = consoleUrl.split('#token=')[1] ?? '';
    expect(await waitUntilReady(origin, READY_TIMEOUT_MS)).toBe(true);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    fs.mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await (browser as Browser | undefined)?.close();
    (service as ChildProcess | undefined)?.kill('SIGTERM');
  });

  async function signedIn(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(consoleUrl);
    await page.waitForSelector('header .viewer');
    return page;
  }

  it('a skill’s page marks each insight of the range on its kind’s chart and lists them as REST does', async () => {
    const page = await signedIn();
    const items = await settled(
      () => inRange('/skill/v1/skills/skill-0001/insights'),
      async () => {
        await page.goto(`${origin}/console/skills/skill-0001?${RANGE}`);
        await page.locator('table.insights, p.empty').last().waitFor();
      },
    );
    const charts = await marked(page);
    const ofKind = (...kinds: string[]) => items.filter((i) => kinds.includes(i.kind)).map((i) => i.id);
    expect(items.length).toBeGreaterThanOrEqual(4);
    expect(charts).toEqual({
      Invocations: ofKind('usage_summary'),
      Traces: [],
      'Error rate': ofKind('tool_failure_hotspot', 'evaluation_drop'),
      Latency: ofKind('latency_regression'),
      Tokens: ofKind('token_efficiency'),
      Cost: ofKind('cost_spike'),
    });
    expect(charts.Latency?.length).toBeGreaterThan(0);
    expect(await listed(page)).toEqual(items.map((i) => i.id));
    const cost = await page.textContent(`table.insights tr[data-kind="cost_spike"] td.found`);
    expect(cost).toMatch(/^\$\d+\.\d\d against a baseline of \$\d+\.\d\d$/);
    await page.screenshot({ path: path.join(SHOTS, 'skill-insights.png'), fullPage: true });
    await page.close();
  });

  it('an agent’s usage page does the same with the agent’s insights', async () => {
    const page = await signedIn();
    const items = await settled(
      () => inRange('/agent/v1/agents/agent-0001/insights'),
      async () => {
        await page.goto(`${origin}/console/agents/agent-0001/usage?${RANGE}`);
        await page.locator('table.insights').waitFor();
      },
    );
    const charts = await marked(page);
    expect(items.map((i) => i.kind)).toEqual(
      expect.arrayContaining(['cost_spike', 'latency_regression', 'usage_summary']),
    );
    expect(charts.Traces).toEqual(items.filter((i) => i.kind === 'usage_summary').map((i) => i.id));
    expect(charts.Latency).toEqual(items.filter((i) => i.kind === 'latency_regression').map((i) => i.id));
    expect(charts.Cost).toEqual(items.filter((i) => i.kind === 'cost_spike').map((i) => i.id));
    expect(await listed(page)).toEqual(items.map((i) => i.id));
    await page.close();
  });

  it('the feed lists the workspace’s insights as Workspace.insights answers them, links subjects and filters by kind', async () => {
    const page = await signedIn();
    type Feed = { data: { workspace: { insights: { nodes: { id: string; kind: string }[] } } } };
    const feed = () =>
      api<Feed>('/graphql', { query: '{ workspace(id: "ws-acme") { insights(first: 50) { nodes { id kind } } } }' });
    let first = true;
    const { nodes } = (
      await settled(feed, async () => {
        if (first) await page.click('nav >> text=Insights');
        else await page.reload();
        first = false;
        await page.waitForSelector('table.insights tbody tr');
      })
    ).data.workspace.insights;
    expect(nodes.length).toBeGreaterThanOrEqual(9);
    expect(await page.inputValue('select[name=workspace]')).toBe('ws-acme');
    expect(await listed(page)).toEqual(nodes.map((n) => n.id));
    const links = await page.$$eval('table.insights td.subject a', (as) => as.map((a) => a.getAttribute('href')));
    expect(links).toContain('/console/skills/skill-0001');
    expect(links).toContain('/console/agents/agent-0001/usage');
    await page.screenshot({ path: path.join(SHOTS, 'insights-feed.png'), fullPage: true });

    await page.selectOption('select[name=kind]', 'cost_spike');
    await page.waitForURL(/kind=cost_spike/);
    await page.waitForSelector('table.insights tbody tr');
    const rows = await page.$$eval('table.insights tbody tr', (trs) =>
      trs.map((r) => [r.getAttribute('data-insight'), r.getAttribute('data-kind')]),
    );
    // Only cost spikes, those of the feed among them (detection may have found more since).
    expect(new Set(rows.map(([, kind]) => kind))).toEqual(new Set(['cost_spike']));
    const spikes = nodes.filter((n) => n.kind === 'COST_SPIKE').map((n) => n.id);
    expect(spikes.length).toBeGreaterThanOrEqual(2);
    expect(rows.map(([id]) => id)).toEqual(expect.arrayContaining(spikes));

    await page.click('table.insights td.subject a[href="/console/skills/skill-0001"]');
    await page.waitForURL(/\/console\/skills\/skill-0001$/);
    await page.locator('figure.chart').first().waitFor();
    await page.close();
  });
});
