/**
 * Decoding of OTLP/HTTP requests of 512 spans (bench/otlp-body.ts, as bench:ingest sends): the
 * hand-written protobuf reader that ingestion uses against the former protobufjs path
 * (test/fixtures/otlp-reference-decoder.ts), and the same spans as OTLP/JSON, plain and with one
 * lone surrogate escaped in one attribute, alternating, in one run.
 * Prints the median µs per request of each and the speed-up. Target: the reader well under 1 ms.
 * Usage: npm run bench:otlp-decode [-- --iterations 500]
 */
import { decodeJson, type DecodedSpan } from '../src/otlp/traces/decode.ts';
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

/** `body` (OTLP/JSON) with its first `create_issue` tool name ending in a lone surrogate, escaped. */
function withLoneSurrogate(body: Buffer): Buffer {
  const text = body.toString('utf8');
  return Buffer.from(text.replace('"create_issue"', '"create_issue\\ud800"'));
}

const iterations = argNumber('iterations', 500);
const bodies = Array.from({ length: BODIES }, (_, i) => benchBody(i, BATCH, false));
const jsonBodies = Array.from({ length: BODIES }, (_, i) => benchBody(i, BATCH, true));
const loneBodies = jsonBodies.map(withLoneSurrogate);
const decoders = { reader: decodeExportRequestProto, protobufjs: decodeProtobufReference };
const same = bodies.every((b) => fingerprint(decoders.reader(b)) === fingerprint(decoders.protobufjs(b)));
const inputs = { reader: bodies, protobufjs: bodies, json: jsonBodies, jsonLone: loneBodies };
const decode = { ...decoders, json: decodeJson, jsonLone: decodeJson };

const micros = { reader: [] as number[], protobufjs: [] as number[], json: [] as number[], jsonLone: [] as number[] };
for (let i = 0; i < WARMUP + iterations; i++) {
  for (const name of ['reader', 'protobufjs', 'json', 'jsonLone'] as const) {
    const b = inputs[name][i % BODIES]!;
    const started = performance.now();
    decode[name](b);
    if (i >= WARMUP) micros[name].push((performance.now() - started) * 1000);
  }
}

const reader = median(micros.reader);
const protobufjs = median(micros.protobufjs);
const fastest = (values: number[]) => Math.min(...values).toFixed(0);
console.log(
  `OTLP decoding: ${BATCH} spans per request (protobuf ${bodies[0]!.length.toLocaleString()} bytes, JSON ${jsonBodies[0]!.length.toLocaleString()} bytes), ${iterations} requests each, alternating`,
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
console.log(
  `  OTLP/JSON            ${median(micros.json).toFixed(0).padStart(6)} µs per request (median; fastest ${fastest(micros.json)})`,
);
console.log(
  `  OTLP/JSON, a lone    ${median(micros.jsonLone).toFixed(0).padStart(6)} µs per request (median; fastest ${fastest(micros.jsonLone)}; one "\\ud800" escape)`,
);
