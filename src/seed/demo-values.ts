/**
 * Deterministic values of the demo bundle: timestamps counted in hours from a fixed day, padded
 * numbers, content hashes and API keys (no clock, no Math.random).
 */

const BASE = Date.UTC(2026, 0, 5);
export const at = (hours: number) => new Date(BASE + hours * 3_600_000).toISOString().replace('.000Z', 'Z');
export const pad = (n: number) => String(n).padStart(4, '0');

export function hashHex(s: string): string {
  let h1 = 0x811c9dc5,
    out = '';
  for (let round = 0; round < 8; round++) {
    for (let i = 0; i < s.length; i++) h1 = Math.imul(h1 ^ s.charCodeAt(i) ^ round, 16777619) >>> 0;
    out += h1.toString(16).padStart(8, '0');
  }
  return out;
}

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export function demoApiKey(id: string, rnd: () => number): string {
  let key = 'agk_';
  for (let i = 0; i < 32; i++) key += B62.charAt(Math.floor(rnd() * 62));
  return key.slice(0, 4 + 28) + id.slice(-4);
}
