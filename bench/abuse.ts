/**
 * `npm run bench:abuse [-- <part> [its arguments]]`: every abuse benchmark, each against the service
 * started as `node src/main.ts` in a process of its own, run one after the other (each part in its
 * own process too, with its own service, data and limits), and a summary of their verdicts. A part
 * prints its figures with their targets and exits non-zero when one is missed.
 *
 * | part | what | script |
 * |---|---|---|
 * | requests | single abusive requests (statistics, OTLP bombs, GraphQL cost, trust), streams of distinct values | abuse-requests.ts |
 * | storm | 40 × 10,000 spans from one caller at once: answers truthful, each span stored once after retries | abuse-storm.ts |
 * | floods | 20,000 idle connections on each port under 4,096 open files; 48 slow 16 MiB gRPC calls | abuse-floods.ts |
 * | disk | one low-privilege user filling the disk against the ingestion quota | abuse-disk.ts |
 * | usage | Tool.usage under 30 aliases and through _entities, against the trace-store budget | abuse-usage.ts |
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const PARTS = {
  requests: 'abuse-requests.ts',
  storm: 'abuse-storm.ts',
  floods: 'abuse-floods.ts',
  disk: 'abuse-disk.ts',
  usage: 'abuse-usage.ts',
} as const;
type Part = keyof typeof PARTS;

const [asked, ...rest] = process.argv.slice(2);
if (asked !== undefined && !(asked in PARTS)) {
  console.error(`unknown part ${asked}; parts: ${Object.keys(PARTS).join(', ')}`);
  process.exit(2);
}
const parts = asked === undefined ? (Object.keys(PARTS) as Part[]) : [asked as Part];

function run(part: Part, args: string[]): Promise<number> {
  console.log(`\n=== bench:abuse ${part} (bench/${PARTS[part]})\n`);
  const child = spawn(process.execPath, [path.join(import.meta.dirname, PARTS[part]), ...args], { stdio: 'inherit' });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

const outcomes: [Part, number][] = [];
for (const part of parts) outcomes.push([part, await run(part, asked === undefined ? [] : rest)]);
console.log('\n=== bench:abuse summary');
for (const [part, code] of outcomes) console.log(`  ${part.padEnd(9)} ${code === 0 ? 'all targets met' : 'MISSED'}`);
process.exit(outcomes.every(([, code]) => code === 0) ? 0 : 1);
