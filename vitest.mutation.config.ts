/**
 * The tests the mutation run (npm run test:mutation, stryker.config.json) uses: those that exercise
 * the mutated modules in process. Suites that start the service as a child process are left out (a
 * mutant in the sandbox would not reach them, and they take most of the suite's time).
 */
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.ts';

export default mergeConfig(
  base,
  defineConfig({
    test: {
      include: [
        'test/auth/**/*.test.ts',
        'test/http/**/*.test.ts',
        'test/traces/**/*.test.ts',
        'test/graphql/**/*.test.ts',
        'test/fuzz/**/*.test.ts',
      ],
    },
  }),
);
