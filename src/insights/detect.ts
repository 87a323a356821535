/**
 * One detection step of one organization: at step time T (a whole hour), the facts of every
 * subject in the current window [T - 24 h, T) and the baseline [T - 8 d, T - 24 h), read a page of
 * subjects at a time (at most `maxSubjects` per subject type and step), the rules of rules.ts (and
 * evaluations.ts when a reader of evaluation scores is given) per workspace and subject, and the
 * insights they find as records with deterministic ids. A kind found again for the same workspace
 * and subject within its cooldown is left out (Cooldowns), except usage_summary, which is once a
 * day by its window.
 *
 * Subjects are read in passes (`passesOf`): skills in one; agents first the organization's
 * registry agents, then the names as sent, so that names anyone may send never crowd the
 * registry's agents out of the bound. A pass stopped at the bound leaves its position (the last
 * subject it examined) in the result, where the next step's pass resumes: every subject is
 * examined in turn, not the same first ones every step.
 */
import { createHash } from 'node:crypto';
import type {
  EvaluationFacts,
  EvaluationFactsReader,
  FactWindow,
  SubjectFacts,
  SubjectFactsReader,
} from '../store/facts-port.ts';
import type { InsightKind, InsightRecord, InsightSubject } from '../store/insight-port.ts';
import { evaluationDrop } from './evaluations.ts';
import { BASELINE_S, WINDOW_S, findings, type Finding } from './rules.ts';
import { setting, type Settings } from './settings.ts';

export interface StepDeps {
  traces: SubjectFactsReader;
  evaluations?: EvaluationFactsReader | undefined;
  /** The settings of a workspace (defaults with its overrides). */
  settings: (workspaceId: string) => Settings;
  cooldowns: Cooldowns;
  /** Subjects per facts call, and per subject type and step at most. */
  subjectsPerCall: number;
  maxSubjects: number;
  /** The organization's registry agents (detection-state-port.ts `agentIds`): read before the names as sent. */
  registryAgents?: readonly string[];
  /** Where each pass resumes (the result's `positions` of the step before); absent: every pass from its first subject. */
  positions?: PagePositions;
  signal?: AbortSignal | undefined;
}

/**
 * Where each pass over subjects resumes, by pass name (`skill`, `agent:registry`, `agent:named`,
 * and the same names after `evaluation:`): the last subject a pass stopped at the bound examined.
 * A pass that reached its last subject has none: the next step's starts from the first.
 */
export type PagePositions = Record<string, string>;

export interface StepResult {
  insights: InsightRecord[];
  /** Subjects whose facts were read, by type (skill, agent, evaluation). */
  examined: Record<'skill' | 'agent' | 'evaluation', number>;
  /** Whether some subject type had more subjects than `maxSubjects` (the rest were not examined). */
  truncated: boolean;
  /** Where the next step's passes resume. */
  positions: PagePositions;
}

type SubjectType = 'skill' | 'agent';

/** Which subjects one pass reads (facts-port.ts `only`, `except`). */
interface Pass {
  name: string;
  only?: readonly string[];
  except?: readonly string[];
}

/** Skills (always registry ids) in one pass; agents: the registry's, then the names as sent. */
function passesOf(type: SubjectType, registryAgents: readonly string[]): Pass[] {
  if (type === 'skill') return [{ name: 'skill' }];
  return [
    { name: 'agent:registry', only: registryAgents },
    { name: 'agent:named', except: registryAgents },
  ];
}

/** What an insight's id and its cooldown are keyed by. */
export interface InsightKey {
  orgId: string;
  workspaceId: string;
  kind: InsightKind;
  subject: InsightSubject;
  /** What tells two insights of one kind and subject apart beside the window (an evaluation's name). */
  detail?: string;
}

/** The same (organization, workspace, kind, subject, detail, window) always gives the same id. */
export function insightId(key: InsightKey, window: FactWindow): string {
  const { orgId, workspaceId, kind, subject, detail } = key;
  const text = JSON.stringify([
    orgId,
    workspaceId,
    kind,
    subject.type,
    subject.id,
    detail ?? null,
    window.startS,
    window.endS,
  ]);
  return `ins_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}

/**
 * When each (workspace, kind, subject) was last found, so a kind is found again only after its
 * cooldown: what this process found in the run, else what `lookup` answers (the newest stored
 * insight's window end at or after a time, or null), asked once per key and run.
 */
export class Cooldowns {
  private readonly last = new Map<string, number | null>();
  private readonly lookup: (key: InsightKey, sinceS: number) => Promise<number | null>;
  constructor(lookup: (key: InsightKey, sinceS: number) => Promise<number | null>) {
    this.lookup = lookup;
  }

  /** Whether the key may be found at `stepS`; if so it counts as found then. */
  async allow(key: InsightKey, stepS: number, cooldownS: number): Promise<boolean> {
    const k = JSON.stringify([key.workspaceId, key.kind, key.subject, key.detail ?? null]);
    if (!this.last.has(k)) this.last.set(k, await this.lookup(key, stepS - cooldownS));
    const last = this.last.get(k) ?? null;
    if (last !== null && last > stepS - cooldownS) return false;
    this.last.set(k, stepS);
    return true;
  }
}

/** The windows of step `stepS`: current, baseline. */
export function stepWindows(stepS: number): [FactWindow, FactWindow] {
  return [
    { startS: stepS - WINDOW_S, endS: stepS },
    { startS: stepS - WINDOW_S - BASELINE_S, endS: stepS - WINDOW_S },
  ];
}

/** Rows of one subject's workspace: grouped by (subject, workspace), windows as indexes. */
function pairs<R extends { subject: string; workspaceId: string; window: number }>(
  rows: readonly R[],
  extra: (r: R) => string = () => '',
): Map<string, { subject: string; workspaceId: string; byWindow: (R | undefined)[] }> {
  const out = new Map<string, { subject: string; workspaceId: string; byWindow: (R | undefined)[] }>();
  for (const r of rows) {
    const k = JSON.stringify([r.subject, r.workspaceId, extra(r)]);
    const p = out.get(k) ?? { subject: r.subject, workspaceId: r.workspaceId, byWindow: [undefined, undefined] };
    p.byWindow[r.window] = r;
    out.set(k, p);
  }
  return out;
}

export async function detectStep(deps: StepDeps, orgId: string, stepS: number, createdAt: string): Promise<StepResult> {
  const windows = stepWindows(stepS);
  const current = windows[0];
  const result: StepResult = {
    insights: [],
    examined: { skill: 0, agent: 0, evaluation: 0 },
    truncated: false,
    positions: { ...deps.positions },
  };
  const dayEnds = stepS % 86400 === 0;
  const record = async (type: SubjectType, subject: string, workspaceId: string, f: Finding, detail?: string) => {
    const key: InsightKey = {
      orgId,
      workspaceId,
      kind: f.kind,
      subject: { type, id: subject },
      ...(detail !== undefined && { detail }),
    };
    const s = deps.settings(workspaceId);
    if (f.kind !== 'usage_summary' && !(await deps.cooldowns.allow(key, stepS, setting(s, 'cooldown_hours') * 3600)))
      return;
    // Every kind is about the current window; a usage summary's is the UTC day the step ends.
    const window = current;
    result.insights.push({
      id: insightId(key, window),
      org_id: orgId,
      workspace_id: workspaceId,
      kind: f.kind,
      subject: key.subject,
      window_start_s: window.startS,
      window_end_s: window.endS,
      payload: {
        kind: f.kind,
        [type === 'skill' ? 'skill_id' : 'agent_id']: subject,
        window: { start_time_unix_seconds: window.startS, end_time_unix_seconds: window.endS },
        ...f.payload,
      },
      created_at: createdAt,
    });
  };
  for (const type of ['skill', 'agent'] as const) {
    const passes = passesOf(type, deps.registryAgents ?? []);
    const query = (pass: Pass, after: string | null, limit: number) => ({
      orgId,
      subjectType: type,
      windows,
      limit,
      after,
      ...(pass.only !== undefined && { only: pass.only }),
      ...(pass.except !== undefined && { except: pass.except }),
    });
    await pages(
      deps,
      result,
      passes,
      (pass, after, limit) => deps.traces.subjectFacts(query(pass, after, limit), deps.signal),
      async (rows: SubjectFacts[]) => {
        for (const p of pairs(rows).values()) {
          const pair = { current: p.byWindow[0], baseline: p.byWindow[1] };
          for (const f of findings(pair, deps.settings(p.workspaceId), dayEnds))
            await record(type, p.subject, p.workspaceId, f);
        }
      },
      type,
    );
    const evaluations = deps.evaluations;
    if (evaluations === undefined) continue;
    await pages(
      deps,
      result,
      passes.map((p) => ({ ...p, name: `evaluation:${p.name}` })),
      (pass, after, limit) => evaluations.evaluationFacts(query(pass, after, limit), deps.signal),
      async (rows: EvaluationFacts[]) => {
        for (const p of pairs(rows, (r) => r.evaluationName).values()) {
          const [now, before] = p.byWindow;
          const f = evaluationDrop(now, before, deps.settings(p.workspaceId));
          if (f !== null) await record(type, p.subject, p.workspaceId, f, now?.evaluationName);
        }
      },
      'evaluation',
    );
  }
  return result;
}

/**
 * Reads the passes in order, a page of subjects at a time, each from its position, until every
 * pass reached its last subject or `maxSubjects` were read: then the step is truncated, the pass
 * it stopped in keeps where it stopped, and the passes after it (not reached) keep theirs.
 */
async function pages<R>(
  deps: StepDeps,
  result: StepResult,
  passes: readonly Pass[],
  read: (
    pass: Pass,
    after: string | null,
    limit: number,
  ) => Promise<{ rows: R[]; subjects: number; next: string | null }>,
  handle: (rows: R[]) => Promise<void>,
  counted: keyof StepResult['examined'],
): Promise<void> {
  let examined = 0;
  for (const pass of passes) {
    if (pass.only?.length === 0) {
      result.positions = positioned(result.positions, pass.name, null);
      continue;
    }
    if (examined >= deps.maxSubjects) {
      result.truncated = true;
      return;
    }
    let after = deps.positions?.[pass.name] ?? null;
    do {
      const page = await read(pass, after, Math.min(deps.subjectsPerCall, deps.maxSubjects - examined));
      examined += page.subjects;
      result.examined[counted] += page.subjects;
      await handle(page.rows);
      after = page.next;
    } while (after !== null && examined < deps.maxSubjects);
    result.positions = positioned(result.positions, pass.name, after);
    if (after !== null) {
      result.truncated = true;
      return;
    }
  }
}

/** The positions with pass `name`'s at `after` (null: none, from its first subject next time). */
function positioned(positions: PagePositions, name: string, after: string | null): PagePositions {
  const others = Object.entries(positions).filter(([pass]) => pass !== name);
  return Object.fromEntries(after === null ? others : [...others, [name, after]]);
}
