-- Where each credential came from (ADR 0038): `import` (the registry file) or `dashboard` (issued
-- through the Dashboard API). A re-import revokes only credentials an import brought that the
-- file no longer names; what the dashboard issued stays, and a revoked credential is never
-- made active again. Credentials from before this column are dashboard ones when the audit log
-- records their issue by an operator or the partner, import ones otherwise.
ALTER TABLE partner_credentials ADD COLUMN origin TEXT NOT NULL DEFAULT 'import' CHECK (origin IN ('import', 'dashboard'));
UPDATE partner_credentials c SET origin = 'dashboard'
WHERE EXISTS (
  SELECT 1 FROM audit_entries a CROSS JOIN LATERAL jsonb_array_elements(a.changes) AS change
  WHERE a.actor_type <> 'import' AND a.action IN ('create', 'issue_credential')
    AND a.partner_type = c.partner_type || 's' AND a.partner_id = c.partner_id
    AND change ->> 'field' = 'credential.' || c.credential_id::text
);
ALTER TABLE partner_credentials ALTER COLUMN origin DROP DEFAULT;
