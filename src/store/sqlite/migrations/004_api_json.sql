-- Registry schema, version 4: each artifact version's ready-to-send document (`api_json`, see
-- src/shared/api-document.ts), written by imports. Rows written before are filled in by the
-- store when it opens (migrate.ts), since the serializer is TypeScript, not SQL.
-- Never edit once released: add a new numbered file instead.
ALTER TABLE artifacts ADD COLUMN api_json TEXT;
