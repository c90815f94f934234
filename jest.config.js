// ESM TypeScript under jest (run with --experimental-vm-modules): see docs/DEVELOPING.md.
const tsJest = ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.test.json' }];
const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^@metronome/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  // fastify's light-my-request (app.inject) require()s `cookie`; package.json pins it to 1.1.1,
  // which is CommonJS and runs on Node 20 (cookie@2 is ESM-only and wants Node 22).
  transform: { '^.+\\.ts$': tsJest },
};

export default {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{libs,services}/*/src/**/*.test.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      globalSetup: '<rootDir>/test/global-setup.mjs',
      // a file that leaves a PostgreSQL or Redis connection open fails (test/leak-check/)
      testEnvironment: '<rootDir>/test/leak-check/leak-environment.mjs',
      setupFilesAfterEnv: ['<rootDir>/test/leak-check/track-connections.ts'],
      slowTestThreshold: 30,
    },
  ],
};
