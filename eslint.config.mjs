import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  {
    ignores: [
      'node_modules',
      'dist',
      '**/dist',
      'dist.*',
      '.cache',
      // The documentation site's generated files and the API reference renderer copied from npm.
      'docs/.vitepress/.temp',
      'docs/.vitepress/cache',
      'docs/public/reference/redoc.standalone.js',
      '.data',
      'coverage',
      '.nx',
      'bench/results',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          depConstraints: [
            {
              sourceTag: 'type:app',
              onlyDependOnLibsWithTags: [
                'type:feature',
                'type:edge',
                'type:data-access',
                'type:util',
                'type:domain',
              ],
            },
            {
              sourceTag: 'type:feature',
              onlyDependOnLibsWithTags: [
                'type:edge',
                'type:data-access',
                'type:util',
                'type:domain',
              ],
            },
            {
              sourceTag: 'type:edge',
              onlyDependOnLibsWithTags: ['type:data-access', 'type:util', 'type:domain'],
            },
            {
              sourceTag: 'type:data-access',
              onlyDependOnLibsWithTags: ['type:data-access', 'type:util', 'type:domain'],
            },
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', 'type:domain'] },
            { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain'] },
            {
              sourceTag: 'type:testing',
              onlyDependOnLibsWithTags: [
                'type:data-access',
                'type:util',
                'type:domain',
                'type:testing',
              ],
            },
          ],
        },
      ],
    },
  },
  {
    // Workers only consume Kafka: neither they nor what they start with may load the HTTP stack.
    files: [
      'apps/{fanout,dispatcher,dlq-handler}/**/*.ts',
      'libs/{fanout,dispatcher,dlq,runtime,auth,kafka,persistence,destinations,domain,config,signing}/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: '@hookbase/web', message: 'Workers must not depend on HTTP.' }] },
      ],
    },
  },
  {
    // The gRPC edge codes its errors from the domain's table of statuses, not through HTTP's.
    files: ['libs/ingest/src/grpc-*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@hookbase/web',
              message: 'The gRPC edge must not depend on HTTP: see ERROR_STATUSES in the domain.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        module: 'writable',
        require: 'readonly',
        __dirname: 'readonly',
        Buffer: 'readonly',
        AbortSignal: 'readonly',
        fetch: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
  },
  prettier,
);
