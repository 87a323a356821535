/**
 * The mutation-testing groups (stryker.config.js, vitest.mutation.config.ts): the modules each
 * group mutates and the in-process test files that should notice. Suites that start the service
 * as a child process are left out: a mutant in Stryker's sandbox would not reach them.
 */
export const groups: Record<string, { mutate: string[]; tests: string[] }> = {
  auth: {
    mutate: ['src/auth/**/*.ts'],
    tests: ['test/auth/**/*.test.ts', 'test/graphql/authorization.test.ts'],
  },
  traces: {
    mutate: ['src/otlp/ingest.ts', 'src/skills/trace-stats.ts'],
    tests: [
      'test/otlp/**/*.test.ts',
      'test/skills/**/*.test.ts',
      'test/auth/authorization-pins.test.ts',
      'test/graphql/trace-stats.test.ts',
    ],
  },
  'stats-request': {
    mutate: ['src/skills/stats-request.ts'],
    tests: ['test/skills/**/*.test.ts', 'test/graphql/trace-stats.test.ts'],
  },
  errors: {
    mutate: ['src/errors.ts'],
    tests: ['test/http/**/*.test.ts', 'test/auth/classification.test.ts', 'test/fuzz/**/*.test.ts'],
  },
};
