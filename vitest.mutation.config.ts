/**
 * The tests a mutation run (npm run test:mutation:<group>, stryker.config.js) uses: the
 * in-process test files of the group named by MUTATION_GROUP (test/mutation-groups.ts).
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';
import { groups } from './test/mutation-groups.ts';

const name = process.env.MUTATION_GROUP ?? 'auth';
const group = groups[name];
if (group === undefined) throw new Error(`unknown mutation group ${name}`);

// Not mergeConfig: it concatenates arrays, so the base's include (every test) would stay.
export default defineConfig({ ...base, test: { ...base.test, include: group.tests } });
