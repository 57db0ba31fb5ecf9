const { compilerOptions } = require('./tsconfig.base.json');

// Three projects: `unit` (specs beside the code, no I/O), `bench` (the benchmark harness's specs,
// bench/) and `integration` (test/, real Kafka, PostgreSQL and HTTP started by scripts/test.mjs).
const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2022',
      // Path aliases are rewritten at transform time, so they also work in globalSetup.
      baseUrl: __dirname,
      paths: compilerOptions.paths,
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
  },
];
const shared = {
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^@hookbase/(.*)$': '<rootDir>/libs/$1/src' },
  testEnvironment: 'node',
};
module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: ['<rootDir>/{apps,libs,scripts}/**/*.spec.ts'],
    },
    {
      ...shared,
      displayName: 'bench',
      testMatch: ['<rootDir>/bench/**/*.spec.ts'],
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      globalSetup: '<rootDir>/test/global-setup.ts',
      setupFilesAfterEnv: ['<rootDir>/test/setup-timeout.ts', '<rootDir>/test/setup-kafkajs.ts'],
    },
  ],
};
