/**
 * The browser console (DESIGN §13), served from console/dist (built by console/build.ts): the
 * console's page at /console (and every path under it, for deep links), the GraphQL explorer for a
 * browser's GET /graphql (when GRAPHQL_EXPLORER is on), and the hashed files under
 * /console/assets/ with a year of caching and their gzip copies. Pages need no token: their
 * scripts call the public API with the token the user gives them. Every answer carries a strict
 * Content-Security-Policy: scripts, workers, styles and connections from the service only (styles
 * may be inline: the editor sets them), no inline script, no frames.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';

const DIST = new URL('../../console/dist/', import.meta.url).pathname;

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

interface Page {
  js: string;
  css: string[];
}
interface Manifest {
  console: Page;
  explorer: Page;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.ttf': 'font/ttf',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
};

const escape = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

function html(title: string, page: Page, body: string): string {
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<link rel="icon" href="data:,">',
    `<title>${escape(title)}</title>`,
    ...page.css.map((href) => `<link rel="stylesheet" href="${escape(href)}">`),
    `<script type="module" src="${escape(page.js)}"></script>`,
    `</head><body>${body}</body></html>`,
  ].join('\n');
}

function readManifest(): Manifest | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(DIST, 'manifest.json'), 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

/** Whether a browser navigation asks for a page (its Accept names text/html). */
function wantsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('text/html');
}

export function registerConsoleRoutes(app: FastifyInstance, options: { explorer: boolean }): void {
  const manifest = readManifest();
  const files = new Set(manifest === null ? [] : fs.readdirSync(path.join(DIST, 'assets')));
  const notBuilt = () => new ApiError('service_unavailable', 'the console is not built: run npm run build:console');

  const page = (reply: FastifyReply, title: string, which: keyof Manifest, body: string) => {
    if (manifest === null) throw notBuilt();
    return reply
      .header('content-security-policy', CONSOLE_CSP)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .type('text/html; charset=utf-8')
      .send(html(title, manifest[which], body));
  };
  const consolePage = (_request: FastifyRequest, reply: FastifyReply) =>
    page(reply, 'Gateway console', 'console', '<main><p class="loading">Loading…</p></main>');

  app.get('/console', { schema: { hide: true } }, consolePage);
  app.get('/console/*', { schema: { hide: true } }, consolePage);
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    // The answer depends on Accept: caches must keep the two apart.
    void reply.header('vary', 'accept');
    if (!wantsHtml(request)) throw new ApiError('not_found', 'no resource at /; the console is at /console');
    return reply.redirect('/console');
  });

  app.get<{ Params: { file: string } }>('/console/assets/:file', { schema: { hide: true } }, async (request, reply) => {
    const { file } = request.params;
    if (!files.has(file) || file.endsWith('.gz'))
      throw new ApiError('not_found', `no console file ${file.slice(0, 80)}`);
    const gzip = files.has(`${file}.gz`) && /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
    // A rebuild while the service runs replaces the files: a name from before it is gone (404);
    // the pages keep naming the old files until the service restarts.
    const body = await fs.promises.readFile(path.join(DIST, 'assets', gzip ? `${file}.gz` : file)).catch(() => {
      throw new ApiError('not_found', `no console file ${file.slice(0, 80)}; reload the page`);
    });
    if (gzip) void reply.header('content-encoding', 'gzip');
    return reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('vary', 'accept-encoding')
      .header('x-content-type-options', 'nosniff')
      .type(TYPES[path.extname(file)] ?? 'application/octet-stream')
      .send(body);
  });

  // A browser opening /graphql gets the explorer; API clients (JSON) reach GraphQL as before.
  if (options.explorer) {
    app.addHook('onRequest', async (request, reply) => {
      if (request.method !== 'GET' || request.url.split('?')[0] !== '/graphql' || !wantsHtml(request)) return;
      return page(reply.header('vary', 'accept'), 'GraphQL explorer', 'explorer', '<div id="explorer"></div>');
    });
  }
}
