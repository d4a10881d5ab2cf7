-- A partner's own loopback URL, registered while the platform was the sandbox on loopback, is no
-- exception on record (ADR 0043): the running sandbox alone lets it be reached. Before, its name
-- joined `internal_urls`, where it stayed an exception if the same database later ran as anything
-- else. Only a partner in such a sandbox could put a name there itself (everywhere else a URL the
-- partner sets leaves the list), so each name whose URL was last set by the partner itself, as the
-- audit log records it, leaves the list; the operators' and the registry file's exceptions stay.
WITH kept AS (
  SELECT p.partner_type, p.partner_id,
    (SELECT jsonb_agg(to_jsonb(name) ORDER BY name)
     FROM jsonb_array_elements_text(p.settings -> 'internal_urls') AS name
     WHERE (SELECT a.actor_type FROM audit_entries a CROSS JOIN LATERAL jsonb_array_elements(a.changes) AS c
            WHERE a.partner_type = p.partner_type || 's' AND a.partner_id = p.partner_id AND c ->> 'field' = 'urls.' || name
            ORDER BY a.seq DESC LIMIT 1) IS DISTINCT FROM p.partner_type) AS names
  FROM partners p
  WHERE jsonb_typeof(p.settings -> 'internal_urls') = 'array'
)
UPDATE partners p
SET settings = CASE WHEN kept.names IS NULL THEN p.settings - 'internal_urls' ELSE jsonb_set(p.settings, '{internal_urls}', kept.names) END
FROM kept
WHERE p.partner_type = kept.partner_type AND p.partner_id = kept.partner_id
  AND kept.names IS DISTINCT FROM p.settings -> 'internal_urls';
