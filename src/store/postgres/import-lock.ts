/**
 * The advisory lock every import takes, exclusively, for its transaction (migrations take
 * 73_100_001/2, see migrate.ts). The fill of ready forms at open holds it for its session, and the
 * triggers of registry migration 004 take it shared (they name the number, 73100003, in SQL).
 */
export const IMPORT_LOCK = 73_100_003;
