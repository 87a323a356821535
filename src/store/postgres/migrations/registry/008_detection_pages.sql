-- Registry schema, version 7 (PostgreSQL): where each pass of insight detection over an
-- organization's subjects resumes after a step that stopped at its bound, as SQLite's migration
-- 009 (src/store/detection-state-port.ts). Bookkeeping: writing it leaves the registry generation.
-- Never edit once released: add a new numbered file.
CREATE TABLE detection_pages (org_id TEXT PRIMARY KEY, positions_json TEXT NOT NULL);
