import { describe, expect, it } from 'vitest';
import { isBackendConnectionError } from './backend-errors.js';

describe('isBackendConnectionError', () => {
  it('knows a state backend that cannot be reached, as ioredis and a Redis Cluster in failover say it', () => {
    for (const message of [
      'Connection is closed.',
      'Reached the max retries per request limit (which is 2).',
      'Too many Cluster redirections. Last error: Error: Connection is closed.',
      'Failed to refresh slots cache.',
      'CLUSTERDOWN The cluster is down',
      "READONLY You can't write against a read only replica.",
      'MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.',
      'BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.',
      'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no.',
      'NOREPLICAS Not enough good replicas to write.',
    ]) {
      expect(isBackendConnectionError(new Error(message))).toBe(true);
    }
    expect(isBackendConnectionError(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }))).toBe(true);
    // Wrapped, as the audit and dispatch stages rethrow.
    expect(isBackendConnectionError(new Error('audit write failed', { cause: new Error('CLUSTERDOWN Hash slot not served') }))).toBe(true);
  });

  it('leaves bugs and refused commands alone', () => {
    expect(isBackendConnectionError(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(false);
    expect(isBackendConnectionError(new TypeError('x is undefined'))).toBe(false);
    expect(isBackendConnectionError(new Error('BUSYGROUP Consumer Group name already exists'))).toBe(false);
    expect(isBackendConnectionError('CLUSTERDOWN')).toBe(false);
  });
});
