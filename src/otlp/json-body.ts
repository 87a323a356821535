/**
 * The one parser of OTLP/JSON bodies (traces, logs and metrics). One pass over the bytes before
 * JSON.parse bounds how deep the body nests, and notes a `\u` escape of a UTF-16 surrogate in a
 * string: JSON.parse keeps a lone one (`"\ud800"`), which every store keeps as U+FFFD, so such a
 * body's strings are made well formed (shared/well-formed.ts) and the receiver compares, hashes and
 * stores the text the stores hold. A body without such an escape (nearly all) is JSON.parse's answer.
 * Protobuf bodies cannot carry one: their strings must be UTF-8 (otlp/traces/proto-reader.ts).
 */
import { wellFormedDeep } from '../shared/well-formed.ts';
import { OtlpDecodeError } from './types.ts';

/**
 * Nesting of JSON arrays and objects allowed in a body: OTLP needs 10 levels to a span attribute
 * and 3 more per nested array or kvlist value. Deeper documents are refused before they are parsed,
 * so that a body of brackets cannot make the parser build millions of nested values.
 */
const MAX_JSON_DEPTH = 64;

/** What the scan of a body found: nesting past the bound, or whether a string escapes a surrogate. */
const TOO_DEEP = -1;
const PLAIN = 0;
const SURROGATE_ESCAPED = 1;

/** Whether `c` is the third digit of a surrogate's escape: 8 to 9, a to f, A to F (`\uD8..` to `\uDF..`). */
const surrogateDigit = (c: number) => c === 0x38 || c === 0x39 || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);

/**
 * TOO_DEEP when `body`'s arrays and objects nest deeper than `max` (strings skipped), else
 * SURROGATE_ESCAPED when a string holds a `\u` escape of a surrogate, else PLAIN; one pass, no
 * allocation, and only a backslash costs more than before.
 */
function scan(body: Uint8Array, max: number): number {
  let depth = 0;
  let inString = false;
  let found = PLAIN;
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as number;
    if (inString) {
      if (c === 0x5c) {
        // A backslash: `\u` then D then 8 to F escapes a surrogate. The escaped byte is skipped.
        if (body[i + 1] === 0x75 && ((body[i + 2] ?? 0) | 0x20) === 0x64 && surrogateDigit(body[i + 3] ?? 0))
          found = SURROGATE_ESCAPED;
        i++;
      } else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return TOO_DEEP;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return found;
}

/** An OTLP/JSON body parsed to its top-level object, strings well formed (`what` names the message in errors). */
export function parseJsonObject(body: Uint8Array, what: string): Record<string, unknown> {
  const found = scan(body, MAX_JSON_DEPTH);
  if (found === TOO_DEEP)
    throw new OtlpDecodeError(`the body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  let message: unknown;
  try {
    message = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch {
    throw new OtlpDecodeError('the body is not valid JSON');
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    throw new OtlpDecodeError(`the body must be an ${what} object`);
  }
  if (found === SURROGATE_ESCAPED) wellFormedDeep(message);
  return message as Record<string, unknown>;
}
