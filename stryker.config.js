/**
 * Mutation testing (issue 18), one group of modules at a time: `npm run test:mutation -- <group>`
 * runs StrykerJS over the group's modules with only the in-process test files that exercise them
 * (vitest.mutation.config.ts reads the same group), so a group finishes in minutes to an hour on 2
 * cores instead of running the whole in-process suite per mutant. Each group writes
 * reports/mutation/<group>.json and prints its score; the break threshold (85%) applies per group,
 * so every group passing means the modules together score at least 85%.
 */
import process from 'node:process';
import { groups } from './test/mutation-groups.ts';

const name = process.env.MUTATION_GROUP ?? 'auth';
const group = groups[name];
if (!group) throw new Error(`unknown mutation group ${name}: one of ${Object.keys(groups).join(', ')}`);

export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  mutate: group.mutate,
  coverageAnalysis: 'perTest',
  concurrency: 2,
  timeoutMS: 20000,
  reporters: ['clear-text', 'progress-append-only', 'json'],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  thresholds: { high: 90, low: 85, break: 85 },
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['data', 'reports', '.stryker-tmp'],
  ignoreStatic: true,
};
