import type { Job } from '@sluice/state';
import type { StateMachineService } from './state-machine-service.js';
import { isTimeoutJobData } from './state-timeouts.js';

/**
 * The worker's handler for STATE_TIMEOUT_KIND. A job whose stay is over does nothing; one that
 * runs before the write that armed it is visible throws, so the scheduler retries it later.
 */
export async function runStateTimeoutJob(service: StateMachineService, job: Job): Promise<void> {
  if (!isTimeoutJobData(job.data)) throw new Error(`state timeout job ${job.id} has malformed data`);
  await service.fireTimeout(job.data);
}
