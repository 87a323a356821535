/**
 * The hand-written protobuf logs reader (otlp/logs/proto-reader.ts) against protobufjs over the same
 * bodies: the same records, whatever the field order, unknown fields, nested values or missing
 * parts; and malformed bodies refused as OtlpDecodeError, never another error.
 */
import { describe, expect, it } from 'vitest';
import { collectLogRecords, encodeLogsRequest } from '../../src/otlp/logs/decode.ts';
import { decodeLogsRequestProto as decodeLogsProtobuf } from '../../src/otlp/logs/proto-reader.ts';
import { otlpMessages } from '../../src/otlp/messages.ts';
import { OtlpDecodeError } from '../../src/otlp/types.ts';
import { otlpLogsBody } from '../fixtures/otlp-body.ts';

const Request = otlpMessages.lookupType('otlp.ExportLogsServiceRequest');
const hex = (v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : '');

/** What protobufjs makes of a body, through the JSON path's walk. */
function reference(body: Buffer) {
  return collectLogRecords(Request.decode(body), hex, 10_000);
}

const kv = (key: string, value: object) => ({ key, value });
const MESSAGES = [
  { resourceLogs: [] },
  {
    resourceLogs: [
      {
        resource: { attributes: [kv('service.name', { stringValue: 'claude-code' }), kv('n', { intValue: 7 })] },
        scopeLogs: [
          {
            logRecords: [
              {
                timeUnixNano: '1700000000000000001',
                observedTimeUnixNano: '1700000000000000002',
                severityNumber: 9,
                body: { stringValue: 'claude_code.api_request' },
                attributes: [
                  kv('a', { stringValue: 'x' }),
                  kv('b', { boolValue: true }),
                  kv('c', { doubleValue: 1.5 }),
                  kv('d', { arrayValue: { values: [{ stringValue: 'y' }] } }),
                  kv('e', { kvlistValue: { values: [kv('f', { intValue: 1 })] } }),
                  kv('a', { stringValue: 'last wins' }),
                ],
                traceId: Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex'),
                spanId: Buffer.from('b7ad6b7169203331', 'hex'),
                eventName: 'api_request',
              },
              { attributes: [kv('event.name', { stringValue: 'codex.tool_result' })] },
              {},
            ],
          },
          { logRecords: [{ body: { intValue: 3 } }] },
        ],
      },
      { scopeLogs: [{ logRecords: [{ body: { kvlistValue: { values: [] } } }] }] },
    ],
  },
];

describe('protobuf logs reader', () => {
  it.each(MESSAGES.map((m, i) => [i, m] as const))('reads message %i as protobufjs does', (_i, message) => {
    const body = encodeLogsRequest(message);
    expect(decodeLogsProtobuf(body, 10_000)).toEqual(reference(body));
  });

  it('keeps fields in any order and skips unknown ones', () => {
    const body = encodeLogsRequest(MESSAGES[1] as object);
    // An unknown varint field (number 15) before the request's first field.
    const withUnknown = Buffer.concat([Buffer.from([15 << 3, 1]), body]);
    expect(decodeLogsProtobuf(withUnknown, 10_000)).toEqual(reference(body));
  });

  it('refuses malformed bodies with an OtlpDecodeError, and more records than allowed', () => {
    for (const bad of [Buffer.from([0x0a, 0xff]), Buffer.from([0x0a, 0x05, 0x12, 0x10]), Buffer.from([0x00])]) {
      expect(() => decodeLogsProtobuf(bad, 10)).toThrow(OtlpDecodeError);
    }
    const three = encodeLogsRequest(otlpLogsBody({ records: [{}, {}, {}] }));
    expect(() => decodeLogsProtobuf(three, 2)).toThrow('more than 2 log records');
  });
});
