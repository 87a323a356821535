/**
 * The second user of bench/abuse-usage.ts, in its own process so that it never shares the
 * service's event loop or the attacker's: it sends one statistics request (REST operation 1), waits
 * for the answer, pauses 20 ms and sends it again, for as long as it runs. Between `start` and
 * `stop` messages it keeps the latencies (a request under way at `stop` is waited for and counted),
 * and answers their median, worst and count on `stop`.
 *
 *   argv: origin, then the request as JSON: {url, headers, body}
 */
import http from 'node:http';

const [origin, requestJson] = process.argv.slice(2) as [string, string];
const request = JSON.parse(requestJson) as { url: string; headers: Record<string, string>; body: string };
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

let latencies: number[] = [];
let failures = 0;
/** The request under way: `stop` waits for it, so that a request slowed by an attack is counted. */
let inflight: Promise<unknown> = Promise.resolve();

function ask(): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request(`${origin}${request.url}`, { method: 'POST', agent, headers: request.headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0 }));
    });
    req.on('error', () => resolve({ ms: performance.now() - started, status: 0 }));
    req.end(request.body);
  });
}

async function loop(): Promise<void> {
  for (;;) {
    const asked = ask().then(({ ms, status }) => {
      if (status === 200) latencies.push(ms);
      else failures++;
    });
    inflight = asked;
    await asked;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const quantile = (xs: number[], q: number) =>
  xs.length === 0 ? 0 : ([...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] as number);

process.on('message', (m: { cmd: 'start' | 'stop' }) => {
  if (m.cmd === 'start') {
    latencies = [];
    failures = 0;
    process.send?.({ started: true });
  } else {
    void inflight.then(() =>
      process.send?.({
        count: latencies.length,
        failures,
        p50Ms: quantile(latencies, 0.5),
        maxMs: latencies.length === 0 ? 0 : Math.max(...latencies),
      }),
    );
  }
});
process.on('disconnect', () => process.exit(0));
void loop();
