/**
 * Tells whether any connection, in any process, has committed to a WAL-mode SQLite file, by
 * reading the header of its wal-index (the `-shm` file), without a transaction.
 *
 * Why: the registry generation is read on every request (the response cache and the kept org
 * trees and memberships are keyed by it). `PRAGMA data_version` begins a read transaction for
 * that, which costs two file-lock system calls, dear on a virtual machine (a cached answer was
 * markedly slower with it, in a hand-run comparison). One positioned read of
 * 96 bytes costs a single call.
 *
 * The header is SQLite's documented wal-index format (https://www.sqlite.org/walformat.html,
 * section 2.1), shared by every SQLite version that opens the file, so it is stable: two copies
 * of a 48-byte header, the second written before the first on every commit. Its bytes 8-47 hold
 * the transaction counter (`iChange`), the last valid frame (`mxFrame`), page count, salts and
 * checksums, so every commit changes them (a commit appends frames, or restarts the WAL with new
 * salts). A commit updates the header before it returns, so a read after it sees it. When both
 * copies differ (a commit under way) the read is tried again; when the file is missing, shorter
 * or not initialized, `read` answers null and the caller asks SQLite.
 */
import fs from 'node:fs';
import os from 'node:os';

const HEADER_BYTES = 48;
/** The bytes that move with every commit: everything after iVersion and the unused word. */
const CHANGING = [8, HEADER_BYTES] as const;
const IS_INIT = 12;
const PAGE_SIZE = 14;
const ATTEMPTS = 3;

export class WalIndexHeader {
  private fd: number | null = null;
  private readonly buf = Buffer.alloc(2 * HEADER_BYTES);
  private readonly shmFile: string;

  constructor(shmFile: string) {
    this.shmFile = shmFile;
  }

  /**
   * The header of the wal-index SQLite uses for `dbFile`: named after the file's real path (SQLite
   * resolves links), and only when its page size is the database's (`PRAGMA page_size`) or none
   * yet, so a stray file is never read in place of the live one. Undefined otherwise: ask SQLite.
   */
  static of(dbFile: string, pageSize: number): WalIndexHeader | undefined {
    let real: string;
    try {
      real = fs.realpathSync(dbFile);
    } catch {
      return undefined;
    }
    const header = new WalIndexHeader(`${real}-shm`);
    // A WAL without frames records no page size yet (0).
    if (header.read() !== null && [0, pageSize].includes(header.pageSize())) return header;
    header.close();
    return undefined;
  }

  /** The changing header bytes as hex, or null when they cannot be read consistently. */
  read(): string | null {
    const fd = this.open();
    if (fd === null) return null;
    for (let i = 0; i < ATTEMPTS; i++) {
      let n: number;
      try {
        n = fs.readSync(fd, this.buf, 0, this.buf.length, 0);
      } catch {
        return null;
      }
      if (n < this.buf.length || this.buf[IS_INIT] !== 1) return null;
      if (this.buf.compare(this.buf, HEADER_BYTES, 2 * HEADER_BYTES, 0, HEADER_BYTES) === 0)
        return this.buf.toString('hex', ...CHANGING);
    }
    return null;
  }

  /** The page size the header records (after a `read`): 1 stands for 65,536, in native byte order; 0 before any frame. */
  private pageSize(): number {
    const n = os.endianness() === 'LE' ? this.buf.readUInt16LE(PAGE_SIZE) : this.buf.readUInt16BE(PAGE_SIZE);
    return n === 1 ? 65_536 : n;
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  private open(): number | null {
    if (this.fd === null) {
      try {
        this.fd = fs.openSync(this.shmFile, 'r');
      } catch {
        return null;
      }
    }
    return this.fd;
  }
}
