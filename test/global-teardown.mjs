// After the integration tests: stops the run's shared Chromium (test/global-setup.mjs), if any.
export default async function globalTeardown() {
  const server = globalThis.__metronomeBrowserServer;
  globalThis.__metronomeBrowserServer = undefined;
  delete process.env.METRONOME_TEST_BROWSER_WS;
  await server?.close();
}
