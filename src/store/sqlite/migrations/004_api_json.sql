-- Registry schema, version 4: each artifact version's ready-to-send document (`api_json`, see
-- src/shared/api-document.ts), written by imports. Rows without one (written before this file, or
-- by a writer that changed the document but not its ready form) are filled in by the store
-- (ready-documents.ts), since the serializer is TypeScript, not SQL; reads serialize the document
-- of such a row themselves meanwhile. `ready_documents` records which schemas the stored forms
-- were serialized by: when they change, every row is serialized again.
-- Never edit once released: add a new numbered file instead.
ALTER TABLE artifacts ADD COLUMN api_json TEXT;
CREATE INDEX artifacts_unready ON artifacts(seq) WHERE api_json IS NULL;
-- A writer that changes a document without its ready form (code from before this file, during a
-- rolling deploy or after a rollback) leaves none, never a stale one.
CREATE TRIGGER artifacts_doc_changed AFTER UPDATE OF doc ON artifacts
  WHEN NEW.doc IS NOT OLD.doc AND NEW.api_json IS OLD.api_json
  BEGIN UPDATE artifacts SET api_json = NULL WHERE seq = NEW.seq; END;
CREATE TABLE ready_documents (id INTEGER PRIMARY KEY CHECK (id = 1), fingerprint TEXT NOT NULL);
