/**
 * The process's open-file limit, which the connection caps are derived from (config.ts). Node
 * raises its soft limit to the hard limit as it starts on most systems; where it did not, start-up
 * asks util-linux's `prlimit` to (Node has no setrlimit). Where neither /proc nor prlimit exists
 * (not Linux), the limit is unknown and the caps fall back to conservative defaults: nothing here
 * stops the service from starting.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';

export interface OpenFileLimit {
  soft: number;
  /** `Infinity` for "unlimited". */
  hard: number;
}

/** The "Max open files" row of /proc/self/limits, or null where it cannot be read. */
export function readOpenFileLimit(limits = '/proc/self/limits'): OpenFileLimit | null {
  let text: string;
  try {
    text = fs.readFileSync(limits, 'utf8');
  } catch {
    return null;
  }
  const row = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  if (row === null) return null;
  const value = (s: string) => (s === 'unlimited' ? Infinity : Number(s));
  const soft = value(row[1] as string);
  const hard = value(row[2] as string);
  return Number.isFinite(soft) && soft > 0 && !Number.isNaN(hard) ? { soft, hard } : null;
}

/** What start-up did about the limit, for its log line. */
export interface RaisedLimit {
  /** The soft limit now in force, or undefined where it cannot be read. */
  soft: number | undefined;
  hard: number | undefined;
  /** Why the soft limit is below the hard one, when it is. */
  note?: string;
}

const PRLIMIT_TIMEOUT_MS = 5000;

/**
 * Raises the soft open-file limit of this process (or of `pid`) to its hard limit where it is lower
 * and finite, and says what is now in force. Never throws: a failed attempt leaves the limit as it
 * was, with a note.
 */
export async function raiseOpenFileLimit(pid = process.pid): Promise<RaisedLimit> {
  const limits = `/proc/${pid}/limits`;
  const before = readOpenFileLimit(limits);
  if (before === null) return { soft: undefined, hard: undefined, note: 'the open-file limit is unknown here' };
  if (before.soft >= before.hard || !Number.isFinite(before.hard)) return before;
  const failure = await new Promise<string | null>((resolve) => {
    execFile(
      'prlimit',
      ['--pid', String(pid), `--nofile=${before.hard}:${before.hard}`],
      { timeout: PRLIMIT_TIMEOUT_MS },
      (err) => {
        resolve(err === null ? null : (err.message.split('\n')[0] ?? 'failed'));
      },
    );
  });
  const after = readOpenFileLimit(limits) ?? before;
  if (after.soft >= after.hard) return after;
  return { ...after, note: `prlimit could not raise the soft limit: ${failure ?? 'no effect'}` };
}
