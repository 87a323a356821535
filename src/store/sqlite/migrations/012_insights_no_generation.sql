-- Registry schema, version 12: storing an insight no longer moves the registry generation. No
-- answer kept by generation reads insights (the REST routes that cache read none; GraphQL never
-- keeps a field of insights), so moving it with every insight detection stores only emptied every
-- tenant's caches. Subscriptions and detection settings keep their triggers of migration 008.
-- Never edit once released: add a new numbered file instead.
DROP TRIGGER insights_generation_insert;
DROP TRIGGER insights_generation_update;
DROP TRIGGER insights_generation_delete;
