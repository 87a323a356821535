-- Registry schema, version 8: the registry generation as a counter every write a reader sees moves.
-- A reader's answers (and the response caches keyed by the generation) depend on these tables; a
-- commit that writes only the outbox (`webhook_deliveries`), detection's cursors or `leases` changes
-- no answer and moves nothing. A trigger per table and operation bumps the counter, so a write by
-- any connection or process, through this code or plain SQL, moves it. Tables added later that a
-- reader sees take the same three triggers (test/store/wal-index.test.ts checks them).
-- Never edit once released: add a new numbered file instead.
CREATE TABLE registry_generation (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT INTO registry_generation (id, n) VALUES (1, 0);

CREATE TRIGGER organizations_generation_insert AFTER INSERT ON organizations BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER organizations_generation_update AFTER UPDATE ON organizations BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER organizations_generation_delete AFTER DELETE ON organizations BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER users_generation_insert AFTER INSERT ON users BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER users_generation_update AFTER UPDATE ON users BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER users_generation_delete AFTER DELETE ON users BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER workspaces_generation_insert AFTER INSERT ON workspaces BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER workspaces_generation_update AFTER UPDATE ON workspaces BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER workspaces_generation_delete AFTER DELETE ON workspaces BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER memberships_generation_insert AFTER INSERT ON memberships BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER memberships_generation_update AFTER UPDATE ON memberships BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER memberships_generation_delete AFTER DELETE ON memberships BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER projects_generation_insert AFTER INSERT ON projects BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER projects_generation_update AFTER UPDATE ON projects BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER projects_generation_delete AFTER DELETE ON projects BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER repos_generation_insert AFTER INSERT ON repos BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER repos_generation_update AFTER UPDATE ON repos BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER repos_generation_delete AFTER DELETE ON repos BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER artifacts_generation_insert AFTER INSERT ON artifacts BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER artifacts_generation_update AFTER UPDATE ON artifacts BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER artifacts_generation_delete AFTER DELETE ON artifacts BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER relationships_generation_insert AFTER INSERT ON relationships BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER relationships_generation_update AFTER UPDATE ON relationships BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER relationships_generation_delete AFTER DELETE ON relationships BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER identities_generation_insert AFTER INSERT ON identities BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER identities_generation_update AFTER UPDATE ON identities BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER identities_generation_delete AFTER DELETE ON identities BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER profile_images_generation_insert AFTER INSERT ON profile_images BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER profile_images_generation_update AFTER UPDATE ON profile_images BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER profile_images_generation_delete AFTER DELETE ON profile_images BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER ready_documents_generation_insert AFTER INSERT ON ready_documents BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER ready_documents_generation_update AFTER UPDATE ON ready_documents BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER ready_documents_generation_delete AFTER DELETE ON ready_documents BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER mcp_servers_generation_insert AFTER INSERT ON mcp_servers BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER mcp_servers_generation_update AFTER UPDATE ON mcp_servers BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER mcp_servers_generation_delete AFTER DELETE ON mcp_servers BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER insights_generation_insert AFTER INSERT ON insights BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER insights_generation_update AFTER UPDATE ON insights BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER insights_generation_delete AFTER DELETE ON insights BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER webhook_subscriptions_generation_insert AFTER INSERT ON webhook_subscriptions BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER webhook_subscriptions_generation_update AFTER UPDATE ON webhook_subscriptions BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER webhook_subscriptions_generation_delete AFTER DELETE ON webhook_subscriptions BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER detection_settings_generation_insert AFTER INSERT ON detection_settings BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER detection_settings_generation_update AFTER UPDATE ON detection_settings BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER detection_settings_generation_delete AFTER DELETE ON detection_settings BEGIN UPDATE registry_generation SET n = n + 1 WHERE id = 1; END;
