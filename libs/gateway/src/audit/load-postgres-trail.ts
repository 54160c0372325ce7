/**
 * The PostgreSQL audit trail's module, loaded where `audit.backend` is postgres (and by
 * `sluice migrate`): it loads pg and @sluice/audit-postgres, which a process on another backend
 * would carry idle (8–9 MB of resident memory imported into an empty Node 24 process; a default
 * `sluice serve` sat 1–3 MB lower without them).
 */
export function loadPostgresTrail() {
  return import('./postgres-trail.js');
}
