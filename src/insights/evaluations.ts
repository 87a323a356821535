/**
 * The hook for `evaluation_drop`: detection finds it from the mean evaluation scores of each
 * (workspace, subject, evaluation name) in the current window and the baseline, as an
 * EvaluationFactsReader answers them. The evaluation measures (`gen_ai.evaluation.result` events,
 * stored beside the spans) are built apart from detection; until a trace store implements this
 * reader and the scheduler is given it, `evaluation_drop` is declared (operation 4) and its rule
 * tested, but never found.
 */
import type { FactWindow } from '../store/facts-port.ts';
import { setting, type Settings } from './settings.ts';
import type { Finding } from './rules.ts';

/** The scores of one evaluation name of one subject's traces in one workspace and window. */
export interface EvaluationFacts {
  window: number;
  workspaceId: string;
  subject: string;
  evaluationName: string;
  /** The mean of the numeric scores (`gen_ai.evaluation.score.value`). */
  meanScore: number;
  samples: number;
}

/** As SubjectFactsQuery: a page of subjects by code point after `after`. */
interface EvaluationFactsQuery {
  orgId: string;
  subjectType: 'skill' | 'agent';
  windows: readonly FactWindow[];
  limit: number;
  after: string | null;
}

export interface EvaluationFactsReader {
  evaluationFacts(
    query: EvaluationFactsQuery,
    signal?: AbortSignal,
  ): Promise<{ rows: EvaluationFacts[]; subjects: number; next: string | null }>;
}

/**
 * The current window's mean score is below the baseline's by at least the `drop` share of the
 * baseline's magnitude, with enough scores in both (a baseline mean of 0 compares nothing).
 */
export function evaluationDrop(
  current: EvaluationFacts | undefined,
  baseline: EvaluationFacts | undefined,
  s: Settings,
): Finding | null {
  if (current === undefined || baseline === undefined || setting(s, 'evaluation_drop.enabled') !== 1) return null;
  const min = setting(s, 'evaluation_drop.min_samples');
  if (current.samples < min || baseline.samples < min || baseline.meanScore === 0) return null;
  const fell = (baseline.meanScore - current.meanScore) / Math.abs(baseline.meanScore);
  // A drop of exactly the share counts, whatever the rounding of the division.
  if (fell < setting(s, 'evaluation_drop.drop') - 1e-12) return null;
  return {
    kind: 'evaluation_drop',
    payload: {
      evaluation_name: current.evaluationName,
      current_score: current.meanScore,
      previous_score: baseline.meanScore,
      samples: current.samples,
      previous_samples: baseline.samples,
    },
  };
}
