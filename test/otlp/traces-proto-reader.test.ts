/**
 * The hand-written protobuf reader against the former protobufjs path (test/fixtures): the same
 * result for generated requests, encoded by protobufjs and by hand (fields in any order, repeated,
 * unknown, with other wire types, repeated attributes), and only OtlpDecodeError for malformed bodies.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  OtlpDecodeError,
  decodeProtobuf,
  encodeExportRequest,
  type DecodedSpan,
} from '../../src/otlp/traces/decode.ts';
import { decodeExportRequestProto } from '../../src/otlp/traces/proto-reader.ts';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { decodeProtobufReference } from '../fixtures/otlp-reference-decoder.ts';

const RUNS = 400;
const SEED = 20_240_611;

// ---- comparing outcomes ----

/** Maps as ordered entries, -0 visible, and which spans share one resource Map. */
function normalize(spans: DecodedSpan[]) {
  const value = (v: unknown) => (Object.is(v, -0) ? '-0' : v);
  const entries = (m: Map<string, unknown>) => [...m].map(([k, v]) => [k, value(v)]);
  return spans.map((s) => ({
    ...s,
    attributes: entries(s.attributes),
    resource: entries(s.resource),
    resourceOwner: spans.findIndex((o) => o.resource === s.resource),
  }));
}

function outcome(decode: (body: Buffer) => DecodedSpan[], body: Buffer) {
  try {
    return { spans: normalize(decode(body)) };
  } catch (err) {
    return { error: err instanceof OtlpDecodeError ? 'OtlpDecodeError' : String(err) };
  }
}

function expectSameAsReference(body: Buffer): void {
  expect(outcome(decodeExportRequestProto, body)).toStrictEqual(outcome(decodeProtobufReference, body));
}

function expectDecodeError(body: Uint8Array): void {
  expect(() => decodeExportRequestProto(body)).toThrow(OtlpDecodeError);
}

/** Never another error; whatever the reader accepts, the reference accepts with the same result. */
function expectNoLaxerThanReference(body: Buffer): void {
  let spans: DecodedSpan[];
  try {
    spans = decodeExportRequestProto(body);
  } catch (err) {
    expect(err).toBeInstanceOf(OtlpDecodeError);
    return;
  }
  expect(normalize(spans)).toStrictEqual(normalize(decodeProtobufReference(body)));
}

// ---- a protobuf writer for hand-made bodies ----

type Bytes = number[];

function varint(v: bigint): Bytes {
  const out: Bytes = [];
  let u = BigInt.asUintN(64, v);
  while (u >= 0x80n) {
    out.push(Number(u & 0x7fn) | 0x80);
    u >>= 7n;
  }
  out.push(Number(u));
  return out;
}
const tagOf = (field: number, wire: number): Bytes => varint(BigInt(field * 8 + wire));
const varintField = (field: number, v: bigint): Bytes => [...tagOf(field, 0), ...varint(v)];
const lenField = (field: number, payload: Bytes | Uint8Array): Bytes => [
  ...tagOf(field, 2),
  ...varint(BigInt(payload.length)),
  ...payload,
];
const stringField = (field: number, s: string): Bytes => lenField(field, Buffer.from(s, 'utf8'));
function fixedField(field: number, wire: 1 | 5, bits: bigint): Bytes {
  const size = wire === 1 ? 8 : 4;
  const out = tagOf(field, wire);
  for (let i = 0; i < size; i++) out.push(Number((BigInt.asUintN(64, bits) >> BigInt(8 * i)) & 0xffn));
  return out;
}
const doubleField = (field: number, d: number): Bytes =>
  fixedField(field, 1, Buffer.from(new Float64Array([d]).buffer).readBigUInt64LE());
const message = (fields: Bytes[]): Bytes => fields.flat();

// ---- hand-made messages: each a random sequence of its fields (any order, repeats, unknowns) ----

const text = fc.oneof(
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }), weight: 4 },
  fc.constantFrom('', 'k', 'é', '😀', '\uFEFFbom', 'a'.repeat(70), 'ü'.repeat(40), 'gen_ai.operation.name'),
);
const int64 = fc.oneof(
  fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n),
  fc.constantFrom(0n, -1n, 2n ** 53n + 1n, -(2n ** 53n) - 3n, 2n ** 63n - 1n, -(2n ** 63n), 5n),
);
const uint64 = fc.oneof(fc.bigInt(0n, 2n ** 64n - 1n), fc.constantFrom(0n, 1n, 2n ** 32n, 2n ** 64n - 1n));

/** A field whose (number, wire type) the message does not know: skipped by both decoders. */
function unknownField(known: number[]): fc.Arbitrary<Bytes> {
  return fc
    .record({
      field: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.constantFrom(100, 2 ** 29 - 1)),
      wire: fc.constantFrom(0, 1, 2, 5),
      bits: uint64,
      bytes: fc.uint8Array({ maxLength: 10 }),
    })
    .filter(({ field, wire }) => !known.includes(field * 8 + wire))
    .map(({ field, wire, bits, bytes }) => {
      if (wire === 0) return varintField(field, bits);
      if (wire === 2) return lenField(field, bytes);
      return fixedField(field, wire === 1 ? 1 : 5, bits);
    });
}
type Field = fc.Arbitrary<Bytes> | { arbitrary: fc.Arbitrary<Bytes>; weight: number };
const fieldsOf = (known: number[], fields: Field[], maxLength = 5, minLength = 0) =>
  fc.array(fc.oneof(...fields, unknownField(known)), { minLength, maxLength }).map(message);

const KEY_VALUE_TAGS = [10, 18];
const ANY_VALUE_TAGS = [10, 16, 24, 33, 42, 50, 58];
const { keyValue } = fc.letrec<{ anyValue: Bytes; keyValue: Bytes }>((tie) => ({
  anyValue: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'any' },
    fieldsOf(
      ANY_VALUE_TAGS,
      [
        text.map((s) => stringField(1, s)),
        uint64.map((v) => varintField(2, v)),
        int64.map((v) => varintField(3, v)),
        fc.double().map((d) => doubleField(4, d)),
        fc.uint8Array({ maxLength: 4 }).map((b) => lenField(7, b)),
        fc.uint8Array({ maxLength: 3 }).map((b) => lenField(1, b)), // a string of raw bytes, maybe not UTF-8
      ],
      3,
    ),
    fc
      .array(tie('anyValue'), { maxLength: 3 })
      .map((values) => lenField(5, message(values.map((v) => lenField(1, v))))),
    fc.array(tie('keyValue'), { maxLength: 2 }).map((kvs) => lenField(6, message(kvs.map((kv) => lenField(1, kv))))),
  ),
  keyValue: fieldsOf(
    KEY_VALUE_TAGS,
    [
      fc.constantFrom('k', '', 'a', 'é').map((s) => stringField(1, s)),
      text.map((s) => stringField(1, s)),
      tie('anyValue').map((v) => lenField(2, v)),
    ],
    4,
  ),
}));

/** Attributes that recur across spans, as in real batches (exercises the attribute memo). */
const COMMON_ATTRIBUTES: Bytes[] = [
  message([stringField(1, 'gen_ai.request.model'), lenField(2, stringField(1, 'gpt-4o'))]),
  message([stringField(1, 'k'), lenField(2, varintField(3, -7n))]),
  message([stringField(1, 'k'), lenField(2, [])]),
  message([stringField(1, 'flag'), lenField(2, varintField(2, 1n)), lenField(2, [])]),
  message([stringField(1, 'skill.id')]),
];
const attribute = fc.oneof(keyValue, fc.constantFrom(...COMMON_ATTRIBUTES));

const status = fieldsOf([18, 24], [text.map((s) => stringField(2, s)), int64.map((v) => varintField(3, v))], 3);
const id = fc.oneof(fc.uint8Array({ minLength: 8, maxLength: 16 }), fc.uint8Array({ maxLength: 2 }));
const SPAN_TAGS = [10, 18, 34, 42, 57, 65, 74, 122];
const span = fc
  .tuple(
    fc.array(attribute, { maxLength: 5 }),
    fieldsOf(
      SPAN_TAGS,
      [
        id.map((b) => lenField(1, b)),
        id.map((b) => lenField(2, b)),
        id.map((b) => lenField(4, b)),
        text.map((s) => stringField(5, s)),
        uint64.map((v) => varintField(6, v)),
        uint64.map((v) => fixedField(7, 1, v)),
        uint64.map((v) => fixedField(8, 1, v)),
        attribute.map((kv) => lenField(9, kv)),
        status.map((s) => lenField(15, s)),
        fc.uint8Array({ maxLength: 6 }).map((b) => lenField(11, b)), // events: not read
        fc.uint8Array({ maxLength: 4 }).map((b) => lenField(3, b)), // trace_state: not read, not checked
        uint64.map((v) => fixedField(16, 5, v)), // flags
      ],
      8,
    ),
  )
  .map(([attributes, rest]) => message([...attributes.map((kv) => lenField(9, kv)), rest]));
const scopeSpans = fieldsOf(
  [18],
  [
    { arbitrary: span.map((s) => lenField(2, s)), weight: 5 },
    fc.uint8Array({ maxLength: 6 }).map((b) => lenField(1, b)), // scope: not read
  ],
  5,
  1,
);
const resource = fieldsOf([10], [attribute.map((kv) => lenField(1, kv))], 4);
const resourceSpans = fieldsOf(
  [10, 18],
  [resource.map((r) => lenField(1, r)), { arbitrary: scopeSpans.map((s) => lenField(2, s)), weight: 3 }],
  4,
  1,
);
const handMadeRequest = fieldsOf(
  [10],
  [{ arbitrary: resourceSpans.map((rs) => lenField(1, rs)), weight: 4 }],
  3,
  1,
).map((b) => Buffer.from(b));

// ---- protobufjs-encoded requests from plain objects ----

const anyValueObject = fc.letrec<{ value: object }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 2, depthIdentifier: 'value' },
    text.map((stringValue) => ({ stringValue })),
    fc.boolean().map((boolValue) => ({ boolValue })),
    int64.map((v) => ({ intValue: String(v) })),
    fc.double().map((doubleValue) => ({ doubleValue })),
    fc.uint8Array({ maxLength: 4 }).map((bytesValue) => ({ bytesValue })),
    fc.constant({}),
    fc.array(tie('value'), { maxLength: 3 }).map((values) => ({ arrayValue: { values } })),
    fc
      .array(fc.record({ key: text, value: tie('value') }), { maxLength: 2 })
      .map((values) => ({ kvlistValue: { values } })),
  ),
})).value;
const keyValueObject = fc.record(
  { key: fc.oneof(text, fc.constantFrom('k', 'k', '')), value: anyValueObject },
  { requiredKeys: ['key'] },
);
const spanObject = fc.record(
  {
    traceId: id,
    spanId: id,
    parentSpanId: id,
    name: text,
    kind: fc.integer({ min: 0, max: 5 }),
    startTimeUnixNano: uint64.map(String),
    endTimeUnixNano: uint64.map(String),
    attributes: fc.array(keyValueObject, { maxLength: 6 }),
    status: fc.record({ code: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), message: text }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const requestObject = fc.record({
  resourceSpans: fc.array(
    fc.record(
      {
        resource: fc.record({ attributes: fc.array(keyValueObject, { maxLength: 3 }) }),
        scopeSpans: fc.array(fc.record({ spans: fc.array(spanObject, { maxLength: 4 }) }), { maxLength: 3 }),
      },
      { requiredKeys: ['scopeSpans'] },
    ),
    { maxLength: 3 },
  ),
});

/** A body with every field of every message set, in one ResourceSpans (so every truncation is invalid). */
function richBody(): Buffer {
  const attributes = [
    { key: 's', value: { stringValue: 'ünïcode 😀' } },
    { key: 'b', value: { boolValue: true } },
    { key: 'i', value: { intValue: '-9007199254740993' } },
    { key: 'd', value: { doubleValue: 2.5 } },
    { key: 'a', value: { arrayValue: { values: [{ stringValue: 'x' }, { intValue: 1 }] } } },
    { key: 'l', value: { kvlistValue: { values: [{ key: 'n', value: { boolValue: false } }] } } },
    { key: 'y', value: { bytesValue: Buffer.from([1, 2]) } },
    { key: 'e', value: {} },
    { key: 'nv' },
    { key: 'nan', value: { doubleValue: NaN } },
    { key: 'inf', value: { doubleValue: -Infinity } },
    { key: 'z', value: { doubleValue: -0 } },
  ];
  const spans = [0, 1, 2].map((i) => ({
    traceId: Buffer.alloc(16, i + 1),
    spanId: Buffer.alloc(8, i + 7),
    parentSpanId: i ? Buffer.alloc(8, 7) : undefined,
    name: `span-${i}`,
    kind: 2,
    startTimeUnixNano: '1700000000000000000',
    endTimeUnixNano: '18446744073709551615',
    attributes,
    status: { code: 2, message: 'broken' },
  }));
  return encodeExportRequest(otlpTraceBody({ resource: attrs({ 'service.name': 'svc' }), spans }));
}

// ---- tests ----

describe('decodeExportRequestProto: the same result as the protobufjs path', () => {
  it('for protobufjs-encoded requests', () => {
    fc.assert(
      fc.property(requestObject, fc.uint8Array({ maxLength: 6 }), (request, trailing) => {
        // A trailing unknown length-delimited field (number 20) at the top level.
        expectSameAsReference(Buffer.concat([encodeExportRequest(request), Buffer.from(lenField(20, trailing))]));
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('for hand-made requests: any field order, repeated fields, unknown fields, other wire types', () => {
    fc.assert(fc.property(handMadeRequest, expectSameAsReference), { numRuns: RUNS * 2, seed: SEED });
  });

  it('gives the documented values on a request with every field', () => {
    const body = richBody();
    expectSameAsReference(body);
    const [first, second] = decodeExportRequestProto(body) as [DecodedSpan, DecodedSpan];
    expect(first).toMatchObject({
      traceId: '01'.repeat(16),
      spanId: '07'.repeat(8),
      parentSpanId: null,
      name: 'span-0',
      startNs: 1_700_000_000_000_000_000n,
      endNs: 2n ** 64n - 1n,
      statusCode: 2,
    });
    expect(second.parentSpanId).toBe('07'.repeat(8));
    expect([...first.attributes]).toStrictEqual([
      ['s', 'ünïcode 😀'],
      ['b', true],
      ['i', -9007199254740992],
      ['d', 2.5],
      ['a', null],
      ['l', null],
      ['y', null],
      ['e', ''],
      ['nv', null],
      ['nan', null],
      ['inf', null],
      ['z', -0],
    ]);
    expect(first.resource).toBe(second.resource);
    expect([...first.resource]).toStrictEqual([['service.name', 'svc']]);
    expect(decodeProtobuf(body)).toStrictEqual(decodeExportRequestProto(body));
  });

  it('merges repeated message fields and keeps the last scalar', () => {
    const kv = (key: string, ...values: Bytes[]) =>
      lenField(9, message([stringField(1, key), ...values.map((v) => lenField(2, v))]));
    const spanBytes = message([
      stringField(5, 'first'),
      stringField(5, 'last'),
      lenField(15, varintField(3, 2n)),
      lenField(15, stringField(2, 'no code')), // status code stays 2
      kv('oneof', stringField(1, 'a'), varintField(3, 5n), stringField(1, 'b')), // 'b'
      kv('merged', varintField(3, 5n), []), // an empty second value keeps 5
      kv('dup', stringField(1, 'x')),
      kv('other', varintField(2, 1n)),
      kv('dup', stringField(1, 'y')),
      [...tagOf(5, 0), 1], // name with a varint wire type: skipped
    ]);
    const body = Buffer.from(
      lenField(
        1,
        message([
          lenField(2, lenField(2, spanBytes)),
          lenField(1, lenField(1, message([stringField(1, 'r1'), lenField(2, stringField(1, 'v'))]))),
          lenField(1, lenField(1, message([stringField(1, 'r2'), lenField(2, varintField(2, 2n ** 40n))]))),
        ]),
      ),
    );
    expectSameAsReference(body);
    const [s] = decodeExportRequestProto(body) as [DecodedSpan];
    expect(s.name).toBe('last');
    expect(s.statusCode).toBe(2);
    expect([...s.attributes]).toStrictEqual([
      ['oneof', 'b'],
      ['merged', 5],
      ['dup', 'y'],
      ['other', true],
    ]);
    expect([...s.resource]).toStrictEqual([
      ['r1', 'v'],
      ['r2', true],
    ]);
  });

  it('keeps strings apart that share their length and first, middle and last bytes (string cache)', () => {
    const keys = [
      'a12m45z',
      'a12m46z',
      'a13m45z',
      'a12m55z',
      'a22m45z',
      'ab',
      'ac',
      'x'.repeat(64),
      'x'.repeat(63) + 'y',
      'x'.repeat(65),
      'é12m45z',
    ];
    const spanBytes = message(
      keys.map((key, i) => lenField(9, message([stringField(1, key), lenField(2, varintField(3, BigInt(i)))]))),
    );
    const body = Buffer.from(lenField(1, lenField(2, message([lenField(2, spanBytes), lenField(2, spanBytes)]))));
    for (let request = 0; request < 2; request++) {
      expectSameAsReference(body);
      for (const s of decodeExportRequestProto(body)) expect([...s.attributes.keys()]).toStrictEqual(keys);
    }
  });

  it('reads a Uint8Array that is not a Buffer, at an offset', () => {
    const body = richBody();
    const copy = new Uint8Array(body.length + 3);
    copy.set(body, 3);
    expect(normalize(decodeExportRequestProto(copy.subarray(3)))).toStrictEqual(
      normalize(decodeProtobufReference(body)),
    );
  });
});

describe('decodeExportRequestProto: malformed bodies throw OtlpDecodeError', () => {
  const spanOf = (fields: Bytes): Buffer => Buffer.from(lenField(1, lenField(2, lenField(2, fields))));

  it('truncated at every byte offset', () => {
    const body = richBody();
    expect(decodeExportRequestProto(body.subarray(0, 0))).toStrictEqual([]);
    for (let end = 1; end < body.length; end++) expectDecodeError(body.subarray(0, end));
  });

  it('random garbage and mutated valid bodies: only OtlpDecodeError, never laxer than protobufjs', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => expectNoLaxerThanReference(Buffer.from(bytes))),
      { numRuns: RUNS, seed: SEED },
    );
    const mutations = fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), {
      minLength: 1,
      maxLength: 3,
    });
    fc.assert(
      fc.property(handMadeRequest, mutations, (body, changes) => {
        if (body.length === 0) return;
        for (const { at, byte } of changes) body[at % body.length] = byte;
        expectNoLaxerThanReference(body);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('lengths past the end of the body or of the enclosing message', () => {
    expectDecodeError(Buffer.from([0x0a, 0x05, 0x00]));
    // The span's length covers 3 bytes; its name claims 5 (the body has enough bytes after it).
    expectDecodeError(
      Buffer.from(lenField(1, lenField(2, [...tagOf(2, 2), 3, 0x2a, 5, 0x61, 0x62, 0x63, 0x64, 0x65]))),
    );
    expectDecodeError(Buffer.from([0x0a, 0x80, 0x80, 0x80, 0x80, 0x08])); // a length of 2^31
  });

  it('truncated and over-long varints', () => {
    expectDecodeError(Buffer.from([0x08, 0xff]));
    expectDecodeError(Buffer.from([0x08, ...Array(10).fill(0xff), 0x01])); // an 11-byte unknown varint
    expectDecodeError(spanOf(lenField(9, lenField(2, [0x18, ...Array(10).fill(0x80), 0x00])))); // an 11-byte int
    expectDecodeError(Buffer.from([0x88, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00])); // a tag of 6 bytes
    expect(decodeExportRequestProto(spanOf(lenField(9, lenField(2, varintField(3, -1n)))))[0]!.attributes.get('')).toBe(
      -1,
    );
  });

  it('groups, other invalid wire types and field number 0', () => {
    for (const bytes of [[0x0b, 0x0c], [0x0c], [0x0e], [0x0f], [0x00, 0x00]]) expectDecodeError(Buffer.from(bytes));
    expectDecodeError(spanOf([0xa3, 0x01, 0xa4, 0x01])); // a group in a span
  });

  it('truncated fixed-size fields', () => {
    expectDecodeError(spanOf([0x39, 1, 2, 3])); // start time: 3 of 8 bytes
    expectDecodeError(spanOf([0x85, 0x01, 1, 2])); // flags: 2 of 4 bytes
  });

  it('invalid UTF-8 in any string, also ones not kept', () => {
    const bad = [0x61, 0xff];
    for (const fields of [
      lenField(5, bad), // name
      lenField(9, lenField(1, bad)), // key
      lenField(15, lenField(2, bad)), // status message
      lenField(9, lenField(2, lenField(5, lenField(1, lenField(1, bad))))), // a string in an array value
      lenField(9, lenField(2, lenField(1, [0xed, 0xa0, 0x80]))), // an encoded surrogate
    ]) {
      const body = spanOf(fields);
      expectDecodeError(body);
      expectSameAsReference(body);
    }
    expect(decodeExportRequestProto(spanOf(lenField(5, [0xef, 0xbb, 0xbf, 0x61])))[0]!.name).toBe('\uFEFFa');
  });

  it('values nested deeper than 100 messages, like protobufjs', () => {
    // Depths as protobufjs counts them: a span attribute's KeyValue is at 4, its AnyValue at 5; each
    // level adds an ArrayValue and an AnyValue. `inner` is the innermost AnyValue's content.
    const nested = (levels: number, inner: Bytes): Bytes => {
      let value = inner;
      for (let i = 0; i < levels; i++) value = lenField(5, lenField(1, value));
      return value;
    };
    const attributeOf = (value: Bytes) => spanOf(lenField(9, lenField(2, value)));
    const atLimit = attributeOf(nested(47, lenField(5, []))); // innermost AnyValue at 99, its empty ArrayValue at 100
    expect(decodeExportRequestProto(atLimit)[0]!.attributes.get('')).toBeNull();
    expectSameAsReference(atLimit);
    const beyond = attributeOf(nested(48, [])); // the innermost, empty AnyValue at 101
    expectDecodeError(beyond);
    expectSameAsReference(beyond);
    expectDecodeError(attributeOf(nested(1000, [])));
  });
});
