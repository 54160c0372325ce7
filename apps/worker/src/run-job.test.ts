import { createLogger, Metrics } from '@sluice/telemetry';
import { describe, expect, it } from 'vitest';
import { instrumentJob } from './run-job.js';

describe('instrumentJob', () => {
  it('counts a job that failed on the state backend in sluice_state_errors_total{operation="job"}, and no other failure', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const logger = createLogger({ level: 'silent', role: 'test' });
    const job = { id: 'j1', attempt: 1, data: {} };
    const failing = (err: Error) => instrumentJob('group-flush', () => Promise.reject(err), { logger, metrics })(job as never);
    await expect(failing(new Error('Connection is closed.'))).rejects.toThrow();
    await expect(failing(new TypeError('x is undefined'))).rejects.toThrow();
    const text = await metrics.prometheusText();
    expect(text).toMatch(/^sluice_state_errors_total\{operation="job"\} 1$/m);
    expect(text).toMatch(/^sluice_jobs_total\{kind="group-flush",result="failure"\} 2$/m);
  });
});
