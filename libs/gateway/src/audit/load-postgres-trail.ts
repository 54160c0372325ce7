/**
 * The PostgreSQL audit trail's module, loaded where `audit.backend` is postgres (and by
 * `sluice migrate`): it loads pg and @sluice/audit-postgres, about 8 MB of resident memory that
 * a process on another backend would carry idle.
 */
export function loadPostgresTrail() {
  return import('./postgres-trail.js');
}
