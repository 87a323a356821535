-- Registry schema, version 3 (PostgreSQL): each artifact version's ready-to-send document
-- (`api_json`, see src/shared/api-document.ts), written by imports. Rows written before are filled
-- in when the store opens (open.ts), since the serializer is TypeScript, not SQL.
-- Never edit once released: add a new numbered file.
ALTER TABLE artifacts ADD COLUMN api_json TEXT;
