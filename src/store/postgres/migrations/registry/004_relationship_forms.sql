-- Registry schema, version 4 (PostgreSQL): each latest artifact's relationships in their ready
-- form (`relationships_json`, with `relationship_ends`, the workspaces of the other ends, and
-- `identity_json`, an agent's masked identity; see src/shared/relationship-forms.ts), as SQLite's
-- migration 005. The triggers drop a form whenever anything it was built from changes, whoever
-- writes (this code, older code during a rolling deploy or after a rollback): a relationship
-- written or removed drops its ends' forms, an identity its agent's; a row that becomes or stops
-- being the latest version, or moves workspace, drops the forms of every version of it and of its
-- relationships' other ends. The store writes the missing forms again in the importing
-- transaction and when it opens (relationship-forms.ts); reads compute the relationships of a row
-- without one, as they always did. Each trigger first takes the imports' advisory lock (73100003,
-- import-lock.ts IMPORT_LOCK) shared: a writer that does not take it itself (an operator's SQL)
-- then waits for a running import or fill, and they wait for it, so no fill rebuilds a form from a
-- row such a writer has changed but not yet committed. The importing session holds the lock
-- already, so its own triggers never wait.
-- Never edit once released: add a new numbered file.
ALTER TABLE artifacts ADD COLUMN relationships_json TEXT, ADD COLUMN relationship_ends TEXT,
  ADD COLUMN identity_json TEXT;
CREATE INDEX artifacts_relationships_unready ON artifacts (seq) WHERE is_latest AND relationships_json IS NULL;

CREATE FUNCTION drop_relationship_forms(ids TEXT[]) RETURNS void LANGUAGE sql AS $$
  UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
  WHERE relationships_json IS NOT NULL AND (id = ANY(ids)
    OR id IN (SELECT to_id FROM relationships WHERE from_id = ANY(ids))
    OR id IN (SELECT from_id FROM relationships WHERE to_id = ANY(ids)))
$$;

CREATE FUNCTION relationships_form_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(73100003);
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
    WHERE id IN (OLD.from_id, OLD.to_id) AND relationships_json IS NOT NULL;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
    WHERE id IN (NEW.from_id, NEW.to_id) AND relationships_json IS NOT NULL;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER relationships_form_changed AFTER INSERT OR UPDATE OR DELETE ON relationships
  FOR EACH ROW EXECUTE FUNCTION relationships_form_changed();

CREATE FUNCTION artifacts_form_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(73100003);
  IF TG_OP = 'INSERT' THEN
    IF NEW.is_latest THEN PERFORM drop_relationship_forms(ARRAY[NEW.id]); END IF;
  ELSIF TG_OP = 'DELETE' THEN
    IF OLD.is_latest THEN PERFORM drop_relationship_forms(ARRAY[OLD.id]); END IF;
  ELSIF NEW.is_latest IS DISTINCT FROM OLD.is_latest OR NEW.workspace_id IS DISTINCT FROM OLD.workspace_id
    OR NEW.id IS DISTINCT FROM OLD.id THEN
    PERFORM drop_relationship_forms(ARRAY[OLD.id, NEW.id]);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER artifacts_form_changed AFTER INSERT OR DELETE OR UPDATE OF is_latest, workspace_id, id ON artifacts
  FOR EACH ROW EXECUTE FUNCTION artifacts_form_changed();

CREATE FUNCTION identities_form_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(73100003);
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
    WHERE id = OLD.agent_id AND relationships_json IS NOT NULL;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
    WHERE id = NEW.agent_id AND relationships_json IS NOT NULL;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER identities_form_changed AFTER INSERT OR UPDATE OR DELETE ON identities
  FOR EACH ROW EXECUTE FUNCTION identities_form_changed();
