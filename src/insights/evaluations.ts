/**
 * The rule of `evaluation_drop`: detection finds it from the mean evaluation scores of each
 * (workspace, subject, evaluation name) in the current window and the baseline, as the trace
 * store's EvaluationFactsReader answers them (store/facts-port.ts; the SQL of both engines is
 * store/stats/evaluation-facts.ts).
 */
import type { EvaluationFacts } from '../store/facts-port.ts';
import { setting, type Settings } from './settings.ts';
import type { Finding } from './rules.ts';

const round = (n: number) => Math.round(n * 1e6) / 1e6;

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
      current_score: round(current.meanScore),
      previous_score: round(baseline.meanScore),
      samples: current.samples,
      previous_samples: baseline.samples,
    },
  };
}
