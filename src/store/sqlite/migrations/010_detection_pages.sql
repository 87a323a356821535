-- Registry schema, version 9: where each pass of insight detection over an organization's
-- subjects resumes after a step that stopped at its bound (src/store/detection-state-port.ts):
-- one JSON object per organization, pass name -> the last subject examined. Bookkeeping, as
-- `detection_cursors`: no generation triggers (a write changes no answer).
-- Never edit once released: add a new numbered file instead.
CREATE TABLE detection_pages (org_id TEXT PRIMARY KEY, positions_json TEXT NOT NULL);
