/**
 * Protobuf decoding of OTLP/HTTP requests of 512 spans (bench/otlp-body.ts, as bench:ingest sends):
 * the hand-written reader that ingestion uses against the former protobufjs path
 * (test/fixtures/otlp-reference-decoder.ts), alternating, in one run.
 * Prints the median µs per request of each and the speed-up. Target: the reader well under 1 ms.
 * Usage: npm run bench:otlp-decode [-- --iterations 500]
 */
import type { DecodedSpan } from '../src/otlp/traces/decode.ts';
import { decodeExportRequestProto } from '../src/otlp/traces/proto-reader.ts';
import { decodeProtobufReference } from '../test/fixtures/otlp-reference-decoder.ts';
import { benchBody } from './otlp-body.ts';

const BATCH = 512;
const BODIES = 16;
const WARMUP = 200;

function argNumber(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

function fingerprint(spans: DecodedSpan[]): string {
  return JSON.stringify(spans, (_key, v: unknown) =>
    typeof v === 'bigint' ? String(v) : v instanceof Map ? [...v] : v,
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] ?? Number.NaN;
}

const iterations = argNumber('iterations', 500);
const bodies = Array.from({ length: BODIES }, (_, i) => benchBody(i, BATCH, false));
const decoders = { reader: decodeExportRequestProto, protobufjs: decodeProtobufReference };
const same = bodies.every((b) => fingerprint(decoders.reader(b)) === fingerprint(decoders.protobufjs(b)));

const micros = { reader: [] as number[], protobufjs: [] as number[] };
for (let i = 0; i < WARMUP + iterations; i++) {
  const b = bodies[i % BODIES]!;
  for (const name of ['reader', 'protobufjs'] as const) {
    const started = performance.now();
    decoders[name](b);
    if (i >= WARMUP) micros[name].push((performance.now() - started) * 1000);
  }
}

const reader = median(micros.reader);
const protobufjs = median(micros.protobufjs);
const fastest = (values: number[]) => Math.min(...values).toFixed(0);
console.log(
  `OTLP protobuf decoding: ${BATCH} spans per request (${bodies[0]!.length.toLocaleString()} bytes), ${iterations} requests each, alternating`,
);
console.log(
  `  hand-written reader  ${reader.toFixed(0).padStart(6)} µs per request (median; fastest ${fastest(micros.reader)}; target well under 1,000)`,
);
console.log(
  `  protobufjs           ${protobufjs.toFixed(0).padStart(6)} µs per request (median; fastest ${fastest(micros.protobufjs)})`,
);
console.log(
  `  speed-up             ${(protobufjs / reader).toFixed(1)}x (medians); same spans from both: ${same ? 'yes' : 'NO'}`,
);
