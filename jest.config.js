// ESM TypeScript under jest (run with --experimental-vm-modules): see docs/DEVELOPING.md.
const tsJest = ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.test.json' }];
const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^@metronome/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': tsJest,
    // cookie@2 is ESM-only and is require()d by fastify's light-my-request (app.inject);
    // jest cannot require ESM on Node 20, so that one package is compiled to CommonJS.
    'node_modules/cookie/.+\\.js$': ['ts-jest', { useESM: false, tsconfig: { allowJs: true, module: 'commonjs', esModuleInterop: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!cookie/)'],
};

export default {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{libs,services}/*/src/**/*.test.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      globalSetup: '<rootDir>/test/global-setup.mjs',
      slowTestThreshold: 30,
    },
  ],
};
