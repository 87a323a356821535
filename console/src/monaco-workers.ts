/**
 * Monaco's web workers, built next to the page by console/build.ts (their hashed URLs are
 * compiled in as WORKERS), served by the service like every console file: no CDN.
 */
declare const WORKERS: { editor: string; json: string; graphql: string };

(globalThis as unknown as { MonacoEnvironment: unknown }).MonacoEnvironment = {
  getWorker(_id: string, label: string): Worker {
    const url = label === 'json' ? WORKERS.json : label === 'graphql' ? WORKERS.graphql : WORKERS.editor;
    return new Worker(url, { type: 'module' });
  },
};
