/**
 * The insight detection section of the configuration (config.ts reads it with the rest): whether
 * the scheduler runs, how often, and what one run may do per organization (src/insights,
 * docs/insights.md). docs/configuration.md lists the variables.
 */
import { bool, ConfigError, int, type Env } from './config-values.ts';

/**
 * The longest cooldown a workspace may set (hours; insights/settings.ts `cooldown_hours`): insight
 * retention keeps at least this long.
 */
export const MAX_COOLDOWN_HOURS = 720;

/** The least INSIGHT_RETENTION_DAYS but 0: the longest cooldown, whose reads need the insights it spans. */
const MIN_INSIGHT_RETENTION_DAYS = Math.ceil(MAX_COOLDOWN_HOURS / 24);

export interface DetectionConfig {
  /** DETECTION_ENABLED: the scheduler runs (default: on, except under NODE_ENV=test). */
  enabled: boolean;
  /** A run starts this often (ms). */
  intervalMs: number;
  /** Hourly steps per organization and run: a run catches up at most this far. */
  maxSteps: number;
  /** Subjects per facts call (the trace store's page), and per subject type and step at most. */
  subjectsPerCall: number;
  maxSubjects: number;
  /** A step is detected only this long (seconds) after it ends, so late spans are in. */
  settleS: number;
}

export function detectionConfig(env: Env, nodeEnv: string): DetectionConfig {
  return {
    enabled: bool(env, 'DETECTION_ENABLED', nodeEnv !== 'test'),
    intervalMs: int(env, 'DETECTION_INTERVAL_MS', 300_000, 1000, 86_400_000),
    maxSteps: int(env, 'DETECTION_MAX_STEPS', 24, 1, 720),
    subjectsPerCall: int(env, 'DETECTION_SUBJECTS_PER_CALL', 200, 1, 1000),
    maxSubjects: int(env, 'DETECTION_MAX_SUBJECTS', 2000, 1, 1_000_000),
    settleS: int(env, 'DETECTION_SETTLE_S', 900, 0, 86_400),
  };
}

/**
 * INSIGHT_RETENTION_DAYS (default 90): as TRACE_RETENTION_DAYS, 0 keeps everything and at most
 * 36500; any other value is at least the longest cooldown (30 days), so pruning, counted back from
 * detection's latest step (retention.ts `lagS`), never deletes the newest insight of a series the
 * cooldown of that step reads (InsightStore.lastWindowEnd).
 */
export function insightRetentionDays(env: Env): number {
  const days = int(env, 'INSIGHT_RETENTION_DAYS', 90, 0, 36_500);
  if (days !== 0 && days < MIN_INSIGHT_RETENTION_DAYS)
    throw new ConfigError(
      `INSIGHT_RETENTION_DAYS must be 0 (keep every insight) or at least ${MIN_INSIGHT_RETENTION_DAYS}, the longest cooldown_hours (${MAX_COOLDOWN_HOURS} h) in days, got ${days}`,
    );
  return days;
}
