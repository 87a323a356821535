import { defineConfig } from 'vitest/config';

export default defineConfig({
  // graphql ships CJS (main) and ESM (module) builds; Node loads the CJS one for everybody (Apollo
  // included), Vite would hand the ESM one to our sources: two instances of graphql break schema
  // and error instanceof checks. One instance, as at run time.
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Hooks start apps and services; on a busy 2-core machine that can take long (a deadline, not a measure).
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
