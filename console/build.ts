/**
 * Builds the browser console (DESIGN §13) into console/dist: the console page and the GraphQL
 * explorer with its Monaco workers, bundled and minified by esbuild from npm packages only, each
 * file named by its content hash (served with a year of caching) and written beside a gzip copy.
 * console/dist/manifest.json names the files of each page for the server (src/rest/console-routes.ts).
 *
 * `npm install` runs it (prepare); `npm start` runs it with --if-stale, which rebuilds only when a
 * source, this script or the lockfile is newer than the manifest.
 * Usage: node console/build.ts [--if-stale]
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import * as esbuild from 'esbuild';

const root = path.dirname(new URL(import.meta.url).pathname);
const out = path.join(root, 'dist');
const assets = path.join(out, 'assets');
const manifestFile = path.join(out, 'manifest.json');

function newestSource(): number {
  const sources = fs
    .readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(root, 'src', f));
  const files = [path.join(root, 'build.ts'), path.join(root, '..', 'package-lock.json'), ...sources];
  return Math.max(...files.map((f) => fs.statSync(f).mtimeMs));
}

if (process.argv.includes('--if-stale') && fs.existsSync(manifestFile)) {
  if (fs.statSync(manifestFile).mtimeMs >= newestSource()) process.exit(0);
}

const started = performance.now();
fs.rmSync(out, { recursive: true, force: true });
const common: esbuild.BuildOptions = {
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  outdir: assets,
  entryNames: '[name]-[hash]',
  chunkNames: 'chunk-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  logLevel: 'warning',
  legalComments: 'none',
  define: { 'process.env.NODE_ENV': '"production"' },
  loader: { '.ttf': 'file', '.woff': 'file', '.woff2': 'file', '.graphql': 'text' },
};

/** The output files of a build for one entry, by extension, as URLs under /console/assets/. */
function outputsOf(meta: esbuild.Metafile, entry: string): { js: string; css: string[] } {
  const [file, output] =
    Object.entries(meta.outputs).find(([, o]) => o.entryPoint !== undefined && o.entryPoint.endsWith(entry)) ?? [];
  if (file === undefined || output === undefined) throw new Error(`no output for ${entry}`);
  const url = (f: string) => `/console/assets/${path.basename(f)}`;
  return { js: url(file), css: output.cssBundle !== undefined ? [url(output.cssBundle)] : [] };
}

const workerEntries = {
  editor: 'monaco-editor/esm/vs/editor/editor.worker.js',
  json: 'monaco-editor/esm/vs/language/json/json.worker.js',
  graphql: 'monaco-graphql/esm/graphql.worker.js',
};
const workers = await esbuild.build({ ...common, entryPoints: Object.values(workerEntries) });
const metafile = (result: esbuild.BuildResult): esbuild.Metafile => {
  if (result.metafile === undefined) throw new Error('esbuild wrote no metafile');
  return result.metafile;
};
const workerUrls = Object.fromEntries(
  Object.entries(workerEntries).map(([name, entry]) => [name, outputsOf(metafile(workers), entry).js]),
);

const pages = await esbuild.build({
  ...common,
  splitting: true,
  entryPoints: [path.join(root, 'src', 'console.ts'), path.join(root, 'src', 'explorer.tsx')],
  define: { ...common.define, WORKERS: JSON.stringify(workerUrls) },
});

// Styles of modules the explorer imports dynamically (Monaco's) land in CSS chunks that esbuild
// does not load by itself: the explorer's page links them all.
const explorer = outputsOf(metafile(pages), 'explorer.tsx');
const chunkCss = Object.keys(metafile(pages).outputs)
  .filter((f) => /\/chunk-[^/]*\.css$/.test(f))
  .map((f) => `/console/assets/${path.basename(f)}`);
const manifest = {
  console: outputsOf(metafile(pages), 'console.ts'),
  explorer: { js: explorer.js, css: [...explorer.css, ...chunkCss] },
  workers: workerUrls,
};
let bytes = 0;
let gzipped = 0;
for (const file of fs.readdirSync(assets)) {
  const body = fs.readFileSync(path.join(assets, file));
  const gz = zlib.gzipSync(body, { level: 9 });
  fs.writeFileSync(path.join(assets, `${file}.gz`), gz);
  bytes += body.length;
  gzipped += gz.length;
}
fs.writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
const kb = (n: number) => `${Math.round(n / 1024).toLocaleString('en-US')} KB`;
console.log(
  `console built in ${Math.round(performance.now() - started)} ms: ${kb(bytes)} (${kb(gzipped)} gzipped) in ${path.relative(process.cwd(), assets)}`,
);
