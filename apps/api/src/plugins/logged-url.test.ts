import { describe, expect, it } from 'vitest';
import { loggedUrl } from './logged-url.js';

describe('loggedUrl', () => {
  it('replaces the values of credential parameters, whatever the case or percent-encoding of their names', () => {
    expect(loggedUrl('/v1/approvals/n/t/1/approve?sig=abc&expires_at=9&kid=k')).toBe('/v1/approvals/n/t/1/approve?sig=[REDACTED]&expires_at=9&kid=k');
    expect(loggedUrl('/x?expires_at=9&%73ig=abc')).toBe('/x?expires_at=9&%73ig=[REDACTED]');
    expect(loggedUrl('/x?SIG=abc&Api_Key=k&token=t&password=p')).toBe('/x?SIG=[REDACTED]&Api_Key=[REDACTED]&token=[REDACTED]&password=[REDACTED]');
    expect(loggedUrl('/x?%E0%A4%A=1&sig=s')).toBe('/x?%E0%A4%A=1&sig=[REDACTED]');
    expect(loggedUrl('/x?secret=a&jwt=b&client_secret=c&refresh_token=d&auth=e&db_passwd=f')).toBe(
      '/x?secret=[REDACTED]&jwt=[REDACTED]&client_secret=[REDACTED]&refresh_token=[REDACTED]&auth=[REDACTED]&db_passwd=[REDACTED]',
    );
  });

  it('leaves other URLs as they are', () => {
    expect(loggedUrl('/v1/audit')).toBe('/v1/audit');
    expect(loggedUrl('/v1/audit?tenant=acme&limit=5&signed=1')).toBe('/v1/audit?tenant=acme&limit=5&signed=1');
    // Dedup and group keys are not credentials: `_key` alone is no sign of one.
    expect(loggedUrl('/v1/groups?group_key=g&dedup_key=d')).toBe('/v1/groups?group_key=g&dedup_key=d');
    expect(loggedUrl('/x?sig')).toBe('/x?sig');
  });
});
