// ESM TypeScript under jest (run with --experimental-vm-modules): see docs/DEVELOPING.md.
// swc strips the types with the build's own options (infra/swc-options.mjs); `npm run check`
// type-checks the tests with the sources.
import { swcOptions } from './infra/swc-options.mjs';

const swc = ['@swc/jest', swcOptions];
const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^@metronome/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    // a library's second entry (package.json "exports"), e.g. @metronome/transports/whatsapp
    '^@metronome/([a-z-]+)/([a-z-]+)$': '<rootDir>/libs/$1/src/$2/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  // fastify's light-my-request (app.inject) require()s `cookie`; package.json pins it to 1.1.1,
  // which is CommonJS and runs on Node 20 (cookie@2 is ESM-only and wants Node 22).
  transform: { '^.+\\.ts$': swc },
};

export default {
  // Four files at a time on this 2-core machine: most files wait on PostgreSQL, Redis, their
  // services or a window of time (a file's own CPU is about 0.3 of its time), so the cores had
  // room for a fourth: on a quiet machine 384 s against 429 s for three, side by side, both
  // green (bench/results/HISTORY.md, "The build by swc"). Under another heavy load (16-24) four let
  // timing checks fail that three kept.
  maxWorkers: 4,
  // the known long files first, so none starts last and leaves a worker alone (test/sequencer.mjs)
  testSequencer: '<rootDir>/test/sequencer.mjs',
  // a safety net against a hang, not a speed check: jest's 5 s trips on a busy machine where a
  // file meets real PostgreSQL beside two others (a global option: projects cannot set it)
  testTimeout: 20_000,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{libs,services}/*/src/**/*.test.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      globalSetup: '<rootDir>/test/global-setup.mjs',
      globalTeardown: '<rootDir>/test/global-teardown.mjs',
      // a file that leaves a PostgreSQL or Redis connection open fails (test/leak-check/)
      testEnvironment: '<rootDir>/test/leak-check/leak-environment.mjs',
      setupFilesAfterEnv: ['<rootDir>/test/leak-check/track-connections.ts'],
      slowTestThreshold: 30,
    },
  ],
};
