/**
 * freshRead (src/shared/fresh-read.ts): concurrent callers share reads, and no caller gets a read
 * that started before its call. The read here is a counter whose value each read captures when it
 * starts, answered when the test says so.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { freshRead } from '../../src/shared/fresh-read.ts';

function controlledSource() {
  let value = 0;
  const pending: { startedAt: number; settle: (ok: boolean) => void }[] = [];
  const read = () =>
    new Promise<number>((resolve, reject) => {
      const startedAt = value;
      pending.push({
        startedAt,
        settle: (ok) => (ok ? resolve(startedAt) : reject(new Error(`read ${startedAt} failed`))),
      });
    });
  return {
    read,
    pending,
    write: () => value++,
    /** Answers the oldest read under way, then lets the reactions run. */
    async answer(ok = true) {
      const next = pending.shift();
      if (next === undefined) throw new Error('no read under way');
      next.settle(ok);
      for (let i = 0; i < 5; i++) await Promise.resolve();
    },
  };
}

describe('freshRead', () => {
  it('never answers a caller with a read that started before its call', async () => {
    const source = controlledSource();
    const generation = freshRead(source.read);
    const first = generation(); // starts read 1, seeing value 0
    source.write(); // a write commits while read 1 is under way
    const second = generation(); // must not take read 1
    const third = generation();
    expect(source.pending).toHaveLength(1);
    await source.answer();
    await expect(first).resolves.toBe(0);
    expect(source.pending).toHaveLength(1); // the queued read started once read 1 settled
    expect(source.pending[0]?.startedAt).toBe(1);
    await source.answer();
    await expect(second).resolves.toBe(1);
    await expect(third).resolves.toBe(1);
  });

  it('costs at most two reads however many callers arrive during one', async () => {
    const source = controlledSource();
    const generation = freshRead(source.read);
    let reads = 0;
    const counted = freshRead(() => {
      reads++;
      return source.read();
    });
    const calls = Array.from({ length: 50 }, () => counted());
    expect(reads).toBe(1);
    await source.answer();
    await source.answer();
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 50 }, () => 0));
    expect(reads).toBe(2);
    // Idle again: the next caller starts its own read.
    const later = generation();
    expect(source.pending).toHaveLength(1);
    await source.answer();
    await expect(later).resolves.toBe(0);
  });

  it('gives a failed read to the callers that shared it, and the next caller reads again', async () => {
    const source = controlledSource();
    const generation = freshRead(source.read);
    const first = generation();
    const joined = generation();
    const failed = expect(joined).rejects.toThrow('read 0 failed');
    await source.answer(true);
    await source.answer(false);
    await expect(first).resolves.toBe(0);
    await failed;
    source.write();
    const after = generation();
    await source.answer(true);
    await expect(after).resolves.toBe(1);
  });
});

describe('freshRead when a read never answers', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits for it at most shareForMs: queued callers then read again, later ones read at once', async () => {
    vi.useFakeTimers();
    let reads = 0;
    const stuck = new Promise<number>(() => undefined); // a connection that died silently
    const generation = freshRead(async () => (++reads === 1 ? stuck : reads), 1000);
    void generation(); // read 1: never answers
    const queued = generation();
    expect(reads).toBe(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(reads).toBe(1); // still shared, within the bound
    await vi.advanceTimersByTimeAsync(1);
    await expect(queued).resolves.toBe(2); // read 2, started when the bound was reached
  });

  it('lets a caller read at once when the read under way is past the bound', async () => {
    vi.useFakeTimers();
    let reads = 0;
    const generation = freshRead(async () => (++reads === 1 ? new Promise<number>(() => undefined) : reads), 1000);
    void generation(); // read 1: never answers, nobody queued behind it
    await vi.advanceTimersByTimeAsync(1000);
    const late = generation();
    expect(reads).toBe(2);
    await expect(late).resolves.toBe(2);
  });
});
