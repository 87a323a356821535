/**
 * A few demo insights, so that a first start shows them on the console: about the first two
 * skills and the first agent of the demo organization, on whole UTC days of the last two weeks
 * before `endS`, each payload valid against its kind's schema (operation 4). Recorded beside the
 * first-start telemetry (seed.ts); detection adds what it finds in that telemetry on its own. Each
 * id is detection's own (insightId) for the same key and window, so detection finding the same
 * insight again stores no second record.
 */
import { insightId } from '../insights/detect.ts';
import type { InsightKind, InsightRecord, InsightSubject } from '../store/insight-port.ts';

const DAY = 86_400;

export interface DemoInsightSubjects {
  orgId: string;
  /** Skills and agents with the workspace their telemetry is recorded in. */
  skills: { id: string; workspaceId: string }[];
  agents: { id: string; workspaceId: string }[];
  endS: number;
}

type Numbers = Record<string, unknown>;

/** What each demo insight found: its kind, how many days before the end of the range its day-long window ends, its numbers. */
const SKILL_FINDINGS: [InsightKind, number, Numbers][][] = [
  [
    ['usage_summary', 1, { traces: 412, sessions: 138, active_users: 21, tokens: 1_864_000, cost_usd: 9.84 }],
    ['latency_regression', 3, { percentile: 'p90', current_ms: 4_820, previous_ms: 2_310, change_ratio: 2.09 }],
    [
      'cost_spike',
      6,
      {
        cost_usd: 31.7,
        baseline_usd: 8.9,
        by_model: [
          { model: 'claude-sonnet-4', cost_usd: 24.1 },
          { model: 'gpt-4o', cost_usd: 7.6 },
        ],
      },
    ],
    ['token_efficiency', 9, { tokens_per_trace: 6_840, success_rate: 0.82, previous_tokens_per_trace: 4_310 }],
  ],
  [
    [
      'tool_failure_hotspot',
      4,
      {
        tools: [
          { tool: 'create_issue', mcp: 'github', calls: 212, errors: 61, error_rate: 0.2877 },
          { tool: 'run_query', mcp: 'postgres', calls: 148, errors: 19, error_rate: 0.1284 },
        ],
      },
    ],
    [
      'evaluation_drop',
      12,
      {
        evaluation_name: 'answer_relevance',
        current_score: 0.64,
        previous_score: 0.83,
        samples: 96,
        previous_samples: 104,
      },
    ],
  ],
];

const AGENT_FINDINGS: [InsightKind, number, Numbers][] = [
  ['usage_summary', 1, { traces: 286, sessions: 97, active_users: 14, tokens: 1_212_000, cost_usd: 6.31 }],
  ['latency_regression', 2, { percentile: 'p99', current_ms: 12_400, previous_ms: 7_050, change_ratio: 1.76 }],
  ['cost_spike', 5, { cost_usd: 18.2, baseline_usd: 5.4, by_model: [{ model: 'gpt-4o', cost_usd: 18.2 }] }],
];

function record(
  orgId: string,
  workspaceId: string,
  subject: InsightSubject,
  [kind, daysBack, numbers]: [InsightKind, number, Numbers],
  dayEndS: number,
): InsightRecord {
  const end = dayEndS - (daysBack - 1) * DAY;
  const window = { start_time_unix_seconds: end - DAY, end_time_unix_seconds: end };
  const member = subject.type === 'agent' ? 'agent_id' : 'skill_id';
  // An evaluation's drop is told apart by the evaluation's name, as detection tells it.
  const detail = kind === 'evaluation_drop' ? String(numbers.evaluation_name) : undefined;
  const key = { orgId, workspaceId, kind, subject, ...(detail !== undefined && { detail }) };
  return {
    id: insightId(key, { startS: window.start_time_unix_seconds, endS: window.end_time_unix_seconds }),
    org_id: orgId,
    workspace_id: workspaceId,
    kind,
    subject,
    window_start_s: window.start_time_unix_seconds,
    window_end_s: window.end_time_unix_seconds,
    payload: { kind, [member]: subject.id, window, ...numbers },
    created_at: new Date((end + 600) * 1000).toISOString(),
  };
}

/** The demo insights: windows on the UTC days before the one `endS` falls in. */
export function demoInsights(subjects: DemoInsightSubjects): InsightRecord[] {
  const dayEnd = Math.floor(subjects.endS / DAY) * DAY;
  const out: InsightRecord[] = [];
  subjects.skills.slice(0, SKILL_FINDINGS.length).forEach((skill, i) => {
    for (const finding of SKILL_FINDINGS[i] ?? [])
      out.push(record(subjects.orgId, skill.workspaceId, { type: 'skill', id: skill.id }, finding, dayEnd));
  });
  const [agent] = subjects.agents;
  if (agent !== undefined)
    for (const finding of AGENT_FINDINGS)
      out.push(record(subjects.orgId, agent.workspaceId, { type: 'agent', id: agent.id }, finding, dayEnd));
  return out;
}
