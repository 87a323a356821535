/**
 * Detection of one organization, incremental: from the step after its cursor (the insight store's
 * detectionCursor; before the first run, the latest complete step only) up to the latest complete
 * step (whole hours up to now less the settle delay, so late spans are in), at most `maxSteps`.
 * Each step's insights are recorded, then the cursor moves to the step: a run stopped half way
 * does the step again, and recording an id stored already changes nothing. A step reads the
 * organization's registry agents before the names as sent, and each pass over subjects resumes
 * where the step before stopped at the bound (detect.ts; positions kept by DetectionState after
 * the cursor moves: a run stopped between the two reads the same subjects again at the next step).
 * A replica that no longer holds detection's lease (`holdsLease`) stops before its next step and
 * before writing the step it computed: another replica does it.
 */
import type { DetectionConfig } from '../config-detection.ts';
import type { DetectionState } from '../store/detection-state-port.ts';
import { SUBJECT_FACT_LIST, type EvaluationFactsReader, type SubjectFactsReader } from '../store/facts-port.ts';
import type { InsightKind, InsightStore, OutboxBound } from '../store/insight-port.ts';
import { Cooldowns, detectStep, type InsightKey, type PagePositions, type StepResult } from './detect.ts';
import { STEP_S, WINDOW_S } from './rules.ts';
import { effectiveSettings, type Settings } from './settings.ts';

/** What one run may do per organization (config-detection.ts). */
type DetectionBounds = Pick<DetectionConfig, 'maxSteps' | 'subjectsPerCall' | 'maxSubjects' | 'settleS'>;

export interface OrgRun {
  orgId: string;
  steps: number;
  /** The last step done (the cursor), null when none ever was. */
  cursorS: number | null;
  examined: StepResult['examined'];
  truncatedSteps: number;
  /** New insights stored, by kind. */
  found: Partial<Record<InsightKind, number>>;
  /** Workspace overrides ignored, as `workspace: name` (they do not check any more). */
  ignoredSettings: string[];
  /** Whether the run stopped because `holdsLease` answered false (the replica is no longer the leader). */
  leaseLost: boolean;
}

export interface OrgDeps {
  traces: SubjectFactsReader;
  insights: InsightStore;
  /** The organization's registry agents and where each pass resumes. */
  state: DetectionState;
  evaluations?: EvaluationFactsReader | undefined;
  bounds: DetectionBounds;
  nowMs: number;
  signal?: AbortSignal | undefined;
  /** What an organization may owe the webhook outbox (none: no bound). */
  outbox?: OutboxBound | undefined;
  /**
   * Renews the replica's lease on detection and answers whether it still holds it: asked before
   * each step is computed and again before its insights are written; false stops the run there
   * (another replica runs detection now), nothing of that step written. None: never stops.
   */
  holdsLease?: (() => Promise<boolean>) | undefined;
}

/** The newest stored insight of `key` (its detail too) whose window ends after `sinceS`: its end, or null. */
const lastFound = (insights: InsightStore, key: InsightKey, sinceS: number): Promise<number | null> =>
  insights.lastWindowEnd({ ...key, detail: key.detail ?? null }, sinceS);

/**
 * The first step to do: the one after the cursor (the latest before the first run), or later when
 * the organization was silent. Every rule needs the subject's spans in the step's current window
 * (rules.ts, evaluations.ts), so the steps before the first one whose window holds a span of the
 * organization find nothing: after a silence the run starts at the step after its first span
 * (past `latest` when none is stored), not at each hour of the silence in turn.
 */
async function firstStep(deps: OrgDeps, orgId: string, cursor: number | null, latest: number): Promise<number> {
  if (cursor === null) return latest;
  const next = cursor + STEP_S;
  if (next >= latest) return next;
  const firstSpan = await deps.traces.firstSpanS(orgId, next - WINDOW_S);
  return firstSpan === null ? latest + STEP_S : Math.max(next, Math.floor(firstSpan / STEP_S) * STEP_S + STEP_S);
}

export async function runOrganization(deps: OrgDeps, orgId: string): Promise<OrgRun> {
  const { insights, bounds } = deps;
  const cursor = await insights.detectionCursor(orgId);
  const latest = Math.floor((deps.nowMs / 1000 - bounds.settleS) / STEP_S) * STEP_S;
  const overrides = await insights.detectionSettings(orgId);
  const ignoredSettings: string[] = [];
  const settings = new Map<string, Settings>();
  const settingsOf = (workspaceId: string): Settings => {
    let s = settings.get(workspaceId);
    if (s === undefined) {
      const effective = effectiveSettings(overrides[workspaceId]);
      ignoredSettings.push(...effective.ignored.map((name) => `${workspaceId}: ${name}`));
      settings.set(workspaceId, (s = effective.settings));
    }
    return s;
  };
  const cooldowns = new Cooldowns((key, sinceS) => lastFound(insights, key, sinceS));
  const run: OrgRun = {
    orgId,
    steps: 0,
    cursorS: cursor,
    examined: { skill: 0, agent: 0, evaluation: 0 },
    truncatedSteps: 0,
    found: {},
    ignoredSettings,
    leaseLost: false,
  };
  const leaseLost = async () => deps.holdsLease !== undefined && !(await deps.holdsLease());
  const createdAt = new Date(deps.nowMs).toISOString();
  const first = await firstStep(deps, orgId, cursor, latest);
  if (first > latest) {
    if (cursor === null || cursor >= latest) return run;
    // No step up to the latest can find anything: they count as done, none computed.
    if (await leaseLost()) return { ...run, leaseLost: true };
    await insights.setDetectionCursor(orgId, latest);
    return { ...run, cursorS: latest };
  }
  // Past SUBJECT_FACT_LIST registry agents, the others are read with the names as sent.
  const registryAgents = await deps.state.agentIds(orgId, SUBJECT_FACT_LIST);
  let positions: PagePositions = await deps.state.pagePositions(orgId);
  for (let step = first; step <= latest && run.steps < bounds.maxSteps;) {
    if (await leaseLost()) return { ...run, leaseLost: true };
    const result = await detectStep(
      {
        traces: deps.traces,
        evaluations: deps.evaluations,
        settings: settingsOf,
        cooldowns,
        subjectsPerCall: bounds.subjectsPerCall,
        maxSubjects: bounds.maxSubjects,
        registryAgents,
        positions,
        signal: deps.signal,
      },
      orgId,
      step,
      createdAt,
    );
    if (await leaseLost()) return { ...run, leaseLost: true };
    const stored = new Set(await insights.recordInsights(result.insights, deps.nowMs, deps.outbox));
    await insights.setDetectionCursor(orgId, step);
    if (!samePositions(result.positions, positions)) await deps.state.setPagePositions(orgId, result.positions);
    positions = result.positions;
    for (const i of result.insights) if (stored.has(i.id)) run.found[i.kind] = (run.found[i.kind] ?? 0) + 1;
    for (const type of ['skill', 'agent', 'evaluation'] as const) run.examined[type] += result.examined[type];
    if (result.truncated) run.truncatedSteps++;
    run.steps++;
    run.cursorS = step;
    step += STEP_S;
  }
  return run;
}

const samePositions = (a: PagePositions, b: PagePositions) =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
