// The project's rules, kept by a tool: type-aware lint (typescript-eslint strict), one reader of
// process.env, and the layers of docs/architecture.md as import boundaries. `npm run lint`; part of
// `npm test`. Formatting is Prettier's (`npm run format`), checked by `npm run format:check`.
import js from '@eslint/js';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** Handler folders: they know nothing of HTTP or GraphQL, and nothing of the demo data. */
const HANDLERS = ['agents', 'tools', 'skills', 'org', 'otlp', 'auth', 'artifacts', 'insights'].map((d) => `./src/${d}`);
const TRANSPORTS = ['./src/rest', './src/graphql', './src/grpc'];

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'src/generated/',
      'console/src/generated/',
      'console/dist/',
      'data/',
      '.stryker-tmp*/',
      'reports/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver': undefined,
      'import-x/resolver-next': [createNodeResolver()],
    },
    rules: {
      // Overflows its stack on graphql-js's recursive types (typescript-eslint 8.73); off until fixed.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      // `async` marks a function that implements a Promise-returning port or route: its throws must
      // reject, not escape synchronously, whether or not the body awaits today.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // Numbers and booleans in template strings read fine; objects are still refused.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `_`-prefixed names are placeholders by convention (tsc's noUnusedParameters agrees).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // A cycle between modules means one of them is in the wrong layer or holds two concerns.
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './src/store',
              from: [...TRANSPORTS, ...HANDLERS, './src/seed', './src/app.ts', './src/context.ts'],
              message: 'stores sit behind ports: they import no transport, handler or seed',
            },
            {
              target: HANDLERS,
              from: [...TRANSPORTS, './src/seed', './src/app.ts'],
              message: 'handlers know nothing of HTTP or GraphQL, and nothing of the demo data',
            },
            { target: './src/graphql', from: './src/rest', message: 'GraphQL imports nothing from rest/' },
            { target: './src/rest', from: './src/graphql', message: 'REST imports nothing from graphql/' },
            {
              target: './src/shared',
              from: ['./src/!(shared|domain)/**', './src/!(errors).ts'],
              message: 'shared helpers serve every layer: they import only domain types and the error catalogue',
            },
            {
              target: ['./src/config.ts', './src/config-*.ts'],
              from: ['./src/*/**', './src/!(config|config-*).ts'],
              message:
                'config.ts (with its sections, config-*.ts) is read by every layer: it imports nothing else of the project',
            },
            {
              target: './src/bundle',
              from: [...TRANSPORTS, ...HANDLERS, './src/store', './src/seed', './src/app.ts', './src/context.ts'],
              message: 'bundle parsing knows only the domain: no store, handler, transport or seed',
            },
            {
              target: ['./src/domain', './src/errors.ts'],
              from: ['./src/!(domain|errors.ts)/**', './src/*.ts'],
              message: 'the domain types and the error catalogue are leaves',
            },
          ],
        },
      ],
    },
  },
  {
    // A file a reader can take in at one sitting; a longer one holds more than one concern.
    files: ['src/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 400 }] },
  },
  {
    // Benchmarks share the data and process builders of test/fixtures/ with the tests, nothing else.
    files: ['bench/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './bench',
              from: './test',
              except: ['./fixtures'],
              message: 'benchmarks import only test/fixtures/ from the tests',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'read configuration through src/config.ts (one reader)' },
      ],
    },
  },
  {
    // Tests and benchmarks assert parsed JSON answers by value: the `any` of `res.json()` is what
    // they check, and a `!` on a row they just asserted exists is the clearest way to read it.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
