/**
 * Deterministic profile pictures: a 5x5 mirrored identicon derived from the SHA-256 of an id,
 * scaled to 64x64, encoded as a PNG by hand (zlib deflate + CRC-32 from node:zlib).
 */
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';

const SIZE = 64;
const CELLS = 5;
const SCALE = Math.floor(SIZE / (CELLS + 1));
const MARGIN = Math.floor((SIZE - SCALE * CELLS) / 2);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** A 64x64 RGB PNG identicon for `id`: same id, same bytes; used when an agent has no stored image. */
export function generateProfilePng(id: string): Uint8Array {
  const h = createHash('sha256').update(id).digest();
  const fg = [h[0] as number, h[1] as number, h[2] as number].map((c) => 60 + (c % 160));
  const bg = [240, 240, 240];
  const on = (x: number, y: number) => ((h[3 + y * 3 + Math.min(x, CELLS - 1 - x)] as number) & 1) === 1;
  const rows: Buffer[] = [];
  for (let py = 0; py < SIZE; py++) {
    const row = Buffer.alloc(1 + SIZE * 3);
    for (let px = 0; px < SIZE; px++) {
      const cx = Math.floor((px - MARGIN) / SCALE);
      const cy = Math.floor((py - MARGIN) / SCALE);
      const inside = px >= MARGIN && py >= MARGIN && cx < CELLS && cy < CELLS;
      const colour = inside && on(cx, cy) ? fg : bg;
      row.set(colour, 1 + px * 3);
    }
    rows.push(row);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(SIZE, 0);
  ihdr.writeUInt32BE(SIZE, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return new Uint8Array(png);
}
