/**
 * The console and the GraphQL explorer in a real browser (Debian's chromium through
 * playwright-core), against the service started as `npm start` starts it, on the demo data: sign-in
 * from the start-up link's fragment, the explorer running a query with completion from the schema,
 * no request to any other origin, no Content-Security-Policy violation, the JavaScript shipped per
 * page. Screenshots go to reports/screenshots/ (ignored by git).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsoleIfStale } from '../helpers/console-build.ts';
import { freePort, READY_TIMEOUT_MS, waitUntilReady } from '../helpers/service-process.ts';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.resolve('reports/screenshots');
const available = fs.existsSync(CHROMIUM);
if (!available && process.env.REQUIRE_SERVER_TESTS === '1')
  throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);

let service: ChildProcess;
let origin: string;
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

describe.skipIf(!available)('the console in a browser', () => {
  beforeAll(async () => {
    buildConsoleIfStale();
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-browser-'));
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
    const scripts: number[] = [];
    page.on('response', (r) => {
      if (r.request().resourceType() === 'script') scripts.push(Number(r.headers()['content-length'] ?? 0));
    });
    const started = Date.now();
    await page.goto(consoleUrl);
    await page.waitForSelector('.viewer');
    const firstRenderMs = Date.now() - started;
    expect(await page.textContent('.viewer')).toContain('Signed in as Alice Acme (user) in org-acme');
    expect(page.url()).toBe(`${origin}/console`);
    const token = await page.evaluate(() => sessionStorage.getItem('gateway.token'));
    expect(consoleUrl.endsWith(`#token=${token}`)).toBe(true);
    const shipped = scripts.reduce((a, b) => a + b, 0);
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
    await page.waitForSelector('.viewer');
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
    await page.keyboard.type('Id user { id');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Enter');
    await page.locator('.graphiql-response', { hasText: 'user-alice' }).waitFor();
    const answer = (await page.textContent('.graphiql-response'))?.replace(/\s+/g, '') ?? '';
    expect(answer).toContain('"viewer":{"orgId":"org-acme","user":{"id":"user-alice"}}');
    await page.screenshot({ path: path.join(SHOTS, 'explorer.png') });
    await page.close();
  });

  it('asked nothing of any other origin, and broke no Content-Security-Policy rule', () => {
    expect([...requested]).toEqual([origin]);
    expect(cspViolations).toEqual([]);
  });
});
