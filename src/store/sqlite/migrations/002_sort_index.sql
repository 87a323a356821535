-- Registry schema, version 2: a covering index for paged artifact lists in any sort order.
-- Never edit once released: add a new numbered file instead.
CREATE INDEX artifacts_latest_sort ON artifacts(kind, workspace_id, name_lower, name, id, display_name_lower, created_at, updated_at)
  WHERE is_latest = 1;
