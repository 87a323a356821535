/**
 * One top-level member of a JSON object text, read without parsing the whole text: a GraphQL
 * field of a stored document (a tool's `toolName`) needs one string of a kilobyte of JSON, and
 * parsing every document of a page to read it was the largest part of a nested query's own work.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** Whether the last string `stringEnd` passed over held an escape. */
let escaped = false;
/** The index of the first backslash at or after the scan's position (Infinity: none left). */
let nextBackslash = Infinity;

/** Index just past the string whose opening quote is at `start`; -1 when unterminated. Sets `escaped`. */
function stringEnd(text: string, start: number): number {
  let q = text.indexOf('"', start + 1);
  if (nextBackslash < start) nextBackslash = text.indexOf('\\', start);
  if (nextBackslash < 0) nextBackslash = Infinity;
  escaped = false;
  for (; q >= 0; q = text.indexOf('"', q + 1)) {
    if (nextBackslash > q) return q + 1;
    escaped = true;
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) {
      nextBackslash = text.indexOf('\\', q + 1);
      if (nextBackslash < 0) nextBackslash = Infinity;
      return q + 1;
    }
  }
  return -1;
}

/** The value of the JSON string token from `start` to `end` (quotes included); `hasEscape` from `stringEnd`. */
function stringValue(text: string, start: number, end: number, hasEscape: boolean): string {
  return hasEscape ? (JSON.parse(text.slice(start, end)) as string) : text.slice(start + 1, end - 1);
}

/** Whether the string token from `start` to `end` is `key`. */
function isKey(text: string, start: number, end: number, hasEscape: boolean, key: string): boolean {
  if (hasEscape) return stringValue(text, start, end, true) === key;
  return end - start - 2 === key.length && text.startsWith(key, start + 1);
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The member `key` of the JSON object `text` (valid JSON, as the store keeps it): its value when
 * it is a string, `undefined` when the object has no such member, and `null` when this scan does
 * not answer (the value is not a string, or `text` is not an object): the caller then parses.
 * As `JSON.parse`, a key given twice answers its last value.
 */
export function topLevelString(text: string, key: string): string | undefined | null {
  let i = 0;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== OPEN_OBJECT) return null;
  nextBackslash = text.indexOf('\\', i);
  if (nextBackslash < 0) nextBackslash = Infinity;
  let found: string | undefined | null = undefined;
  let depth = 0;
  // At depth 1, whether the next string is a member's name (after `{` or `,`).
  let atName = false;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return null;
      if (depth === 1 && atName) {
        atName = false;
        if (isKey(text, i, end, escaped, key)) {
          let v = end;
          while (v < text.length && (isSpace(text.charCodeAt(v)) || text.charCodeAt(v) === COLON)) v++;
          if (text.charCodeAt(v) === QUOTE) {
            const valueEnd = stringEnd(text, v);
            if (valueEnd < 0) return null;
            found = stringValue(text, v, valueEnd, escaped);
            i = valueEnd - 1;
            continue;
          }
          found = null;
        }
      }
      i = end - 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      atName = depth === 1;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (c === COMMA && depth === 1) {
      atName = true;
    }
  }
  return found;
}
