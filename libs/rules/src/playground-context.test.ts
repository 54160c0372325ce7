import { describe, expect, it } from 'vitest';
import { isListableEnvKey, playgroundContext } from './playground-context.js';

const MONDAY = Date.UTC(2024, 0, 15, 14, 30, 45, 123); // Monday 2024-01-15 14:30:45.123 UTC

describe('playgroundContext: time', () => {
  it('gives UTC calendar fields by default', () => {
    expect(playgroundContext(MONDAY, {}, 'UTC')).toEqual({
      time: { hour: 14, minute: 30, second: 45, day: 15, month: 1, year: 2024, weekday: 'Monday', weekday_num: 1, timestamp: 1705329045 },
      environment_keys: [],
      timezone: 'UTC',
    });
  });

  it('numbers weekdays Monday=1 through Sunday=7', () => {
    const day = 24 * 3600 * 1000;
    expect(playgroundContext(MONDAY + 6 * day, {}, 'UTC').time).toMatchObject({ weekday: 'Sunday', weekday_num: 7 });
    expect(playgroundContext(MONDAY + 5 * day, {}, 'UTC').time).toMatchObject({ weekday: 'Saturday', weekday_num: 6 });
  });

  it('uses the given IANA time zone', () => {
    const ctx = playgroundContext(MONDAY, {}, 'America/New_York');
    expect(ctx.time).toMatchObject({ hour: 9, minute: 30, day: 15, weekday: 'Monday', timestamp: 1705329045 });
    expect(ctx.timezone).toBe('America/New_York');
    expect(playgroundContext(Date.UTC(2024, 0, 15, 23, 0), {}, 'Asia/Tokyo').time).toMatchObject({ hour: 8, day: 16, weekday: 'Tuesday', weekday_num: 2 });
  });

  it('reports midnight as hour 0', () => {
    expect(playgroundContext(Date.UTC(2024, 0, 15, 0, 5), {}, 'UTC').time.hour).toBe(0);
  });

  it('falls back to UTC for an unknown zone and says so', () => {
    const ctx = playgroundContext(MONDAY, {}, 'Mars/Olympus');
    expect(ctx.timezone).toBe('UTC');
    expect(ctx.time.hour).toBe(14);
  });
});

describe('playgroundContext: environment keys', () => {
  it('lists names only, sorted, leaving out sensitive-looking names', () => {
    const env = {
      PATH: '/bin',
      HOME: '/root',
      NODE_ENV: 'production',
      DB_PASSWORD: 'x',
      GITHUB_TOKEN: 'x',
      AWS_SECRET_ACCESS_KEY: 'x',
      api_key: 'x',
      STRIPE_KEY: 'x',
      GCP_CREDENTIALS_FILE: 'x',
      SSH_PRIVATE_KEY_PATH: 'x',
      client_secret: 'x',
      KEYBOARD: 'us',
      KEY_ID: 'k',
    };
    const ctx = playgroundContext(MONDAY, env, 'UTC');
    expect(ctx.environment_keys).toEqual(['HOME', 'KEYBOARD', 'KEY_ID', 'NODE_ENV', 'PATH']);
    expect(JSON.stringify(ctx)).not.toContain('/bin');
  });

  it.each([
    ['MY_SECRET', false],
    ['password', false],
    ['Access_Token_Url', false],
    ['CREDENTIAL', false],
    ['private_key', false],
    ['SOME_KEY', false],
    ['some_key', false],
    ['KEYS', true],
    ['MONKEY', true],
    ['LOG_LEVEL', true],
  ])('%s listable: %s', (name, listable) => {
    expect(isListableEnvKey(name)).toBe(listable);
  });
});
