/**
 * The console's routes over HTTP: pages without a token and with a strict CSP, hashed files cached
 * for a year and sent gzip-encoded, nothing outside the built files reachable, the explorer and
 * introspection only where GRAPHQL_EXPLORER allows them (off in production by default).
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../src/rest/console-routes.ts';
import { buildConsoleIfStale } from '../helpers/console-build.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
let manifest: { console: { js: string; css: string[] }; explorer: { js: string; css: string[] } };
beforeAll(async () => {
  buildConsoleIfStale();
  manifest = JSON.parse(fs.readFileSync('console/dist/manifest.json', 'utf8'));
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const html = { accept: 'text/html,application/xhtml+xml' };

describe('console pages', () => {
  it('/console and deep links answer the page, with no token, a strict CSP and no inline script', async () => {
    for (const url of ['/console', '/console/skills/skill-0001']) {
      const res = await t.app.inject({ method: 'GET', url, headers: html });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toContain(`<script type="module" src="${manifest.console.js}"></script>`);
      expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    }
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline|https?:/);
  });

  it('a browser opening / goes to the console; an API client gets 404', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/', headers: html });
    expect(page.statusCode).toBe(302);
    expect(page.headers.vary).toBe('accept');
    expect(page.headers.location).toBe('/console');
    const api = await t.app.inject({ method: 'GET', url: '/' });
    expect(api.statusCode).toBe(404);
    expect(api.headers.vary).toBe('accept');
    expect(api.json().code).toBe('not_found');
  });

  it('a browser GET /graphql gets the explorer page; API clients still need a token', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/graphql', headers: html });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`src="${manifest.explorer.js}"`);
    expect(page.headers.vary).toBe('accept');
    for (const href of manifest.explorer.css) expect(page.body).toContain(`href="${href}"`);
    const api = await t.app.inject({ method: 'GET', url: '/graphql?query=%7B__typename%7D' });
    expect(api.statusCode).toBe(401);
  });
});

describe('console files', () => {
  it('hashed files: a year of caching, gzip when accepted, the same bytes either way', async () => {
    const plain = await t.app.inject({ method: 'GET', url: manifest.console.js });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gz = await t.app.inject({
      method: 'GET',
      url: manifest.console.js,
      headers: { 'accept-encoding': 'gzip, br' },
    });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toBe('accept-encoding');
    expect(zlib.gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true);
    expect(gz.rawPayload.length).toBeLessThan(plain.rawPayload.length);
  });

  it('nothing but the built files: unknown names, the gzip copies and paths out of the folder are 404', async () => {
    for (const url of [
      '/console/assets/nope.js',
      `${manifest.console.js}.gz`,
      '/console/assets/..%2Fmanifest.json',
      '/console/assets/%2e%2e%2f%2e%2e%2fpackage.json',
    ]) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });
});

describe('GRAPHQL_EXPLORER', () => {
  it('off (the production default): no explorer page and no introspection', async () => {
    const prod = await startTestApp({ env: { GRAPHQL_EXPLORER: 'false' } });
    try {
      const page = await prod.app.inject({ method: 'GET', url: '/graphql', headers: html });
      expect(page.statusCode).toBe(401);
      const res = await prod.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { ...(await prod.auth('u-admin')), 'content-type': 'application/json' },
        payload: { query: '{ __schema { queryType { name } } }' },
      });
      expect(res.json().errors[0].message).toMatch(/introspection/i);
    } finally {
      await prod.close();
    }
  });

  it('on (outside production by default): introspection answers', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json' },
      payload: { query: '{ __schema { queryType { name } } }' },
    });
    expect(res.json()).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
  });
});
