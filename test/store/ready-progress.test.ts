/** The progress of a long fill of ready-to-send documents: every 10,000 rows, then once when done. */
import { describe, expect, it } from 'vitest';
import { readyProgress } from '../../src/shared/api-document.ts';

describe('ready-to-send fill progress', () => {
  it('reports every 10,000 rows written and the total at the end', () => {
    const messages: string[] = [];
    const report = readyProgress((m) => messages.push(m));
    for (let written = 1000; written <= 25_000; written += 1000) report(written, false);
    report(25_300, true);
    expect(messages).toEqual([
      'ready-to-send documents: 10,000 rows written so far',
      'ready-to-send documents: 20,000 rows written so far',
      'ready-to-send documents: 25,300 rows written, done',
    ]);
  });

  it('says nothing for a fill that wrote nothing, or without a listener', () => {
    const messages: string[] = [];
    readyProgress((m) => messages.push(m))(0, true);
    expect(messages).toEqual([]);
    expect(() => readyProgress(undefined)(20_000, false)).not.toThrow();
  });
});
