/**
 * The watcher of bench/abuse-requests.ts and bench/abuse-floods.ts, in its own process so that it never shares the service's event
 * loop or the attacker's: every 10 ms it asks the service for GET /healthz (one keep-alive
 * connection) and reads the service's resident memory from /proc. Between `start` and `stop`
 * messages it keeps the worst /healthz latency and the peak RSS, and answers them on `stop`.
 */
import fs from 'node:fs';
import http from 'node:http';

const [origin, pidText] = process.argv.slice(2) as [string, string];
const pid = Number(pidText);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

let worstMs = 0;
let peakRssKb = 0;
let samples = 0;

function rssKb(): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

function healthz(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.get(`${origin}/healthz`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - started));
    });
    req.on('error', () => resolve(performance.now() - started));
  });
}

async function loop(): Promise<void> {
  for (;;) {
    const tick = performance.now();
    const ms = await healthz();
    worstMs = Math.max(worstMs, ms);
    peakRssKb = Math.max(peakRssKb, rssKb());
    samples++;
    const wait = 10 - (performance.now() - tick);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

process.on('message', (m: { cmd: 'start' | 'stop' | 'rss' }) => {
  if (m.cmd === 'start') {
    worstMs = 0;
    samples = 0;
    peakRssKb = rssKb();
    process.send?.({ started: true, rssMb: peakRssKb / 1024 });
  } else if (m.cmd === 'stop') {
    process.send?.({ worstMs, peakRssMb: Math.max(peakRssKb, rssKb()) / 1024, samples });
  } else {
    process.send?.({ rssMb: rssKb() / 1024 });
  }
});
process.on('disconnect', () => process.exit(0));
void loop();
