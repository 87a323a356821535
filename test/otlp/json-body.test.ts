/**
 * The one OTLP/JSON body parser of traces, logs and metrics (src/otlp/json-body.ts): bodies nesting
 * deeper than 64 arrays and objects refused before they are parsed, and lone UTF-16 surrogates that
 * a `\u` escape names (`"\ud800"`) made U+FFFD in every string, keys included, as every store keeps
 * them; a pair escaped (`"\ud83d\ude00"`) is one character and stays. A body without such an escape
 * is JSON.parse's answer, untouched.
 */
import { describe, expect, it } from 'vitest';
import { parseJsonObject } from '../../src/otlp/json-body.ts';
import { OtlpDecodeError } from '../../src/otlp/types.ts';
import { parseWellFormedJson, wellFormed } from '../../src/shared/well-formed.ts';

const body = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));
const parse = (text: string) => parseJsonObject(body(text), 'ExportTraceServiceRequest');
const nested = (levels: number) => `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;

describe('parseJsonObject', () => {
  it('refuses a body nesting deeper than 64 levels, and one that is not JSON or not an object', () => {
    expect(parse(nested(64))).toEqual({ a: JSON.parse(nested(64)).a });
    expect(() => parse(nested(65))).toThrow(
      new OtlpDecodeError('the body nests arrays and objects deeper than 64 levels'),
    );
    // Brackets inside strings, escaped quotes included, are text.
    expect(parse(`{"a":"${'['.repeat(100)}\\"${'{'.repeat(100)}"}`).a).toBe(`${'['.repeat(100)}"${'{'.repeat(100)}`);
    expect(() => parse('{"a":')).toThrow(new OtlpDecodeError('the body is not valid JSON'));
    expect(() => parse('[{}]')).toThrow(new OtlpDecodeError('the body must be an ExportTraceServiceRequest object'));
    expect(() => parse('"\\ud800"')).toThrow(
      new OtlpDecodeError('the body must be an ExportTraceServiceRequest object'),
    );
  });

  it('makes every lone surrogate escaped U+FFFD: values, keys, in arrays and deep objects', () => {
    const parsed = parse(
      '{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc-\\ud800"}}]},' +
        '"scopeSpans":[{"spans":[{"name":"\\uDC00x\\udbff","attributes":[{"key":"k\\ud801","value":{"arrayValue":' +
        '{"values":[{"stringValue":"a\\udfff"},{"intValue":"3"}]}}}]}]}]}]}',
    );
    expect(parsed).toEqual({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc-\ufffd' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  name: '\ufffdx\ufffd',
                  attributes: [
                    {
                      key: 'k\ufffd',
                      value: { arrayValue: { values: [{ stringValue: 'a\ufffd' }, { intValue: '3' }] } },
                    },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
    expect(JSON.stringify(parsed)).not.toMatch(/\\u[dD][89a-fA-F]/);
    // A key made well formed keeps its value; `__proto__` stays an own member, not the prototype.
    const keys = parse('{"\\ud800":1,"__proto__":{"x":"\\ud800"},"b":["\\ud800",["\\udc00"]]}');
    expect(Object.keys(keys)).toEqual(['__proto__', 'b', '\ufffd']);
    expect(keys['\ufffd']).toBe(1);
    expect(Object.getPrototypeOf(keys)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(keys, '__proto__')?.value).toEqual({ x: '\ufffd' });
    expect(keys.b).toEqual(['\ufffd', ['\ufffd']]);
  });

  it('leaves a pair escaped, an escaped backslash before "ud800", and bodies without such an escape as parsed', () => {
    expect(parse('{"a":"\\ud83d\\ude00","b":"\\u00e9\\u0041"}')).toEqual({ a: '😀', b: 'éA' });
    // `\\ud800` is a backslash, then the text "ud800".
    expect(parse('{"a":"\\\\ud800"}')).toEqual({ a: '\\ud800' });
    const text = JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ name: 'é 😀 \u2028', kind: 2 }] }] }] });
    expect(parse(text)).toEqual(JSON.parse(text));
    // The UTF-8 form of a surrogate is no UTF-8: decoding already makes each of its bytes U+FFFD.
    const raw = Buffer.concat([Buffer.from('{"a":"x'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]);
    expect(parseJsonObject(new Uint8Array(raw), 'ExportLogsServiceRequest')).toEqual({ a: 'x\ufffd\ufffd\ufffd' });
  });
});

describe('well-formed text', () => {
  it('replaces lone surrogates only', () => {
    expect(wellFormed('a\ud800b\udc00')).toBe('a\ufffdb\ufffd');
    expect(wellFormed('😀')).toBe('😀');
    expect(wellFormed('\udc00\ud800')).toBe('\ufffd\ufffd');
  });

  it('parses JSON text (a JSON string attribute) to well-formed values', () => {
    expect(parseWellFormedJson('{"mcp_server_name":"srv-\\ud800","n":[1,"\\udfff"]}')).toEqual({
      mcp_server_name: 'srv-\ufffd',
      n: [1, '\ufffd'],
    });
    expect(parseWellFormedJson('"\\ud800"')).toBe('\ufffd');
    expect(parseWellFormedJson('{"a":"\\ud83d\\ude00"}')).toEqual({ a: '😀' });
    // Nesting far deeper than a recursive walk could follow.
    const deep = `${'['.repeat(20_000)}"\\ud800"${']'.repeat(20_000)}`;
    let v = parseWellFormedJson(deep);
    for (let i = 0; i < 20_000; i++) v = (v as unknown[])[0];
    expect(v).toBe('\ufffd');
    expect(() => parseWellFormedJson('{')).toThrow(SyntaxError);
  });
});
