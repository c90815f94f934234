import { Metrics } from '@metronome/observability';
import { countSockets } from './socket-metrics.js';

describe('countSockets', () => {
  test('counts openings and closings by reason, and keeps the open gauge right', async () => {
    const metrics = new Metrics('sender-test');
    const on = countSockets(metrics, 'whatsapp');
    on({ kind: 'opened' });
    on({ kind: 'opened' });
    on({ kind: 'closed', wasOpen: true, why: 'handed over' });
    // a socket that never opened does not take one off the gauge
    on({ kind: 'closed', wasOpen: false, why: 'did not open' });
    const text = await metrics.registry.metrics();
    expect(text).toContain('metronome_platform_connections_total{platform="whatsapp",event="opened",reason="",service="sender-test"} 2');
    expect(text).toContain('metronome_platform_connections_total{platform="whatsapp",event="closed",reason="handed_over",service="sender-test"} 1');
    expect(text).toContain('metronome_platform_connections_total{platform="whatsapp",event="closed",reason="did_not_open",service="sender-test"} 1');
    expect(text).toContain('metronome_platform_sockets_open{platform="whatsapp",service="sender-test"} 1');
  });
});
