// After the integration tests: stops the run's shared stack and Chromium (test/global-setup.mjs), if any.
// The stack's stop throws when a service did not exit cleanly: the run fails with it.
export default async function globalTeardown() {
  const shared = globalThis.__metronomeSharedStack;
  const server = globalThis.__metronomeBrowserServer;
  globalThis.__metronomeSharedStack = undefined;
  globalThis.__metronomeBrowserServer = undefined;
  delete process.env.METRONOME_TEST_SHARED_STACK;
  delete process.env.METRONOME_TEST_BROWSER_WS;
  try {
    await shared?.stack.stop();
  } finally {
    await shared?.database.drop();
    await server?.close();
  }
}
