-- Registry schema, version 5: each latest artifact's relationships in their ready form
-- (`relationships_json`, with `relationship_ends`, the workspaces of the other ends, and
-- `identity_json`, an agent's masked identity; see src/shared/relationship-forms.ts). The triggers below drop a form whenever anything it was built
-- from changes, whoever writes (this code, older code during a rolling deploy or after a rollback):
-- a relationship written or removed drops its ends' forms, an identity its agent's; a row that becomes or stops being the
-- latest version, or moves workspace, drops the forms of every version of it and of its
-- relationships' other ends. The store writes the missing forms again in the importing
-- transaction and when it opens (relationship-forms.ts); reads compute the relationships of a row
-- without one, as they always did.
-- Never edit once released: add a new numbered file instead.
ALTER TABLE artifacts ADD COLUMN relationships_json TEXT;
ALTER TABLE artifacts ADD COLUMN relationship_ends TEXT;
ALTER TABLE artifacts ADD COLUMN identity_json TEXT;
CREATE INDEX artifacts_relationships_unready ON artifacts(seq) WHERE is_latest = 1 AND relationships_json IS NULL;
CREATE TRIGGER relationships_form_on_insert AFTER INSERT ON relationships BEGIN
  UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
  WHERE id IN (NEW.from_id, NEW.to_id) AND relationships_json IS NOT NULL;
END;
CREATE TRIGGER relationships_form_on_update AFTER UPDATE ON relationships BEGIN
  UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
  WHERE id IN (OLD.from_id, OLD.to_id, NEW.from_id, NEW.to_id) AND relationships_json IS NOT NULL;
END;
CREATE TRIGGER relationships_form_on_delete AFTER DELETE ON relationships BEGIN
  UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
  WHERE id IN (OLD.from_id, OLD.to_id) AND relationships_json IS NOT NULL;
END;
CREATE TRIGGER artifacts_form_on_insert AFTER INSERT ON artifacts WHEN NEW.is_latest = 1 BEGIN
  UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
  WHERE relationships_json IS NOT NULL AND (id = NEW.id
    OR id IN (SELECT to_id FROM relationships WHERE from_id = NEW.id)
    OR id IN (SELECT from_id FROM relationships WHERE to_id = NEW.id));
END;
CREATE TRIGGER artifacts_form_on_update AFTER UPDATE OF is_latest, workspace_id, id ON artifacts
  WHEN NEW.is_latest IS NOT OLD.is_latest OR NEW.workspace_id IS NOT OLD.workspace_id OR NEW.id IS NOT OLD.id BEGIN
  UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
  WHERE relationships_json IS NOT NULL AND (id IN (OLD.id, NEW.id)
    OR id IN (SELECT to_id FROM relationships WHERE from_id IN (OLD.id, NEW.id))
    OR id IN (SELECT from_id FROM relationships WHERE to_id IN (OLD.id, NEW.id)));
END;
CREATE TRIGGER artifacts_form_on_delete AFTER DELETE ON artifacts WHEN OLD.is_latest = 1 BEGIN
  UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
  WHERE relationships_json IS NOT NULL AND (id = OLD.id
    OR id IN (SELECT to_id FROM relationships WHERE from_id = OLD.id)
    OR id IN (SELECT from_id FROM relationships WHERE to_id = OLD.id));
END;
CREATE TRIGGER identities_form_on_insert AFTER INSERT ON identities BEGIN
  UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
  WHERE id = NEW.agent_id AND relationships_json IS NOT NULL;
END;
CREATE TRIGGER identities_form_on_update AFTER UPDATE ON identities BEGIN
  UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
  WHERE id IN (OLD.agent_id, NEW.agent_id) AND relationships_json IS NOT NULL;
END;
CREATE TRIGGER identities_form_on_delete AFTER DELETE ON identities BEGIN
  UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
  WHERE id = OLD.agent_id AND relationships_json IS NOT NULL;
END;
-- INSERT OR REPLACE and UPDATE OR REPLACE delete the rows they conflict with (another agent's, by
-- client id or key hash) without firing delete triggers: drop those agents' forms first.
CREATE TRIGGER identities_form_before_insert BEFORE INSERT ON identities BEGIN
  UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
  WHERE relationships_json IS NOT NULL AND id IN (SELECT agent_id FROM identities
    WHERE agent_id = NEW.agent_id OR client_id = NEW.client_id OR api_key_hash = NEW.api_key_hash);
END;
CREATE TRIGGER identities_form_before_update BEFORE UPDATE ON identities BEGIN
  UPDATE artifacts SET relationships_json = NULL, relationship_ends = NULL
  WHERE relationships_json IS NOT NULL AND id IN (SELECT agent_id FROM identities
    WHERE agent_id = NEW.agent_id OR client_id = NEW.client_id OR api_key_hash = NEW.api_key_hash);
END;
