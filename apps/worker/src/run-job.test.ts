import { createLogger, Metrics } from '@sluice/telemetry';
import { describe, expect, it } from 'vitest';
import { capturedLogLines } from '../../../test/support/log-lines.js';
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

  it('logs the failures of one kind with one message once per 30 s, saying how many it held back', async () => {
    const { destination, lines } = capturedLogLines();
    const logger = createLogger({ level: 'warn', role: 'test', destination });
    const metrics = new Metrics({ defaultMetrics: false });
    const failing = instrumentJob('group-flush', (job) => Promise.reject(new Error(job.id === 'other' ? 'another reason' : 'OOM command not allowed')), {
      logger,
      metrics,
    });
    for (let i = 0; i < 50; i++) await expect(failing({ id: `j${i}`, attempt: 1, data: {} } as never)).rejects.toThrow();
    await expect(failing({ id: 'other', attempt: 1, data: {} } as never)).rejects.toThrow();
    expect(lines.map((l) => [l['msg'], l['job_id'], (l['err'] as { message: string }).message])).toEqual([
      ['job failed', 'j0', 'OOM command not allowed'],
      ['job failed', 'other', 'another reason'],
    ]);
    expect(await metrics.prometheusText()).toMatch(/^sluice_jobs_total\{kind="group-flush",result="failure"\} 51$/m);
  });
});
