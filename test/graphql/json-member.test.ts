/**
 * topLevelString (shared/json-member.ts) against JSON.parse: for any JSON object, the member's
 * string value, undefined when absent, null (parse instead) when it is not a string.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { topLevelString } from '../../src/shared/json-member.ts';

/** What JSON.parse says the scan must answer. */
function expected(text: string, key: string): string | undefined | null {
  const value: unknown = (JSON.parse(text) as Record<string, unknown>)[key];
  if (!Object.hasOwn(JSON.parse(text) as object, key)) return undefined;
  return typeof value === 'string' ? value : null;
}

describe('topLevelString', () => {
  it('reads a top-level string member, not a nested one of the same name', () => {
    const text = JSON.stringify({
      a: { tool_name: 'inner' },
      list: ['tool_name', { tool_name: 1 }],
      tool_name: 'outer',
    });
    expect(topLevelString(text, 'tool_name')).toBe('outer');
    expect(topLevelString('{"x":{"tool_name":"inner"}}', 'tool_name')).toBeUndefined();
  });

  it('decodes escapes in names and values; the last of a repeated name wins, as JSON.parse', () => {
    expect(topLevelString('{"t\\u006fol":"a\\"b\\\\c\\n"}', 'tool')).toBe('a"b\\c\n');
    expect(topLevelString('{ "k" : "1" , "k" : "2" }', 'k')).toBe('2');
    expect(topLevelString('{"k":"1","k":3}', 'k')).toBeNull();
  });

  it('leaves non-string values and non-objects to the caller', () => {
    expect(topLevelString('{"k":null}', 'k')).toBeNull();
    expect(topLevelString('{"k":{"a":"b"}}', 'k')).toBeNull();
    expect(topLevelString('["k","v"]', 'k')).toBeNull();
    expect(topLevelString('"k"', 'k')).toBeNull();
  });

  it('agrees with JSON.parse on any object', () => {
    const keys = fc.constantFrom('tool_name', 'name', 'a"b', 'é\\', '', '[', '{"x":1}');
    const value = fc.jsonValue({ maxDepth: 3 });
    const object = fc.dictionary(fc.oneof(keys, fc.string()), fc.oneof(value, fc.string()), { maxKeys: 8 });
    fc.assert(
      fc.property(object, keys, fc.boolean(), (o, key, spaced) => {
        const text = JSON.stringify(o, null, spaced ? 2 : undefined);
        expect(topLevelString(text, key)).toEqual(expected(text, key));
      }),
      { numRuns: 2000 },
    );
  });
});
