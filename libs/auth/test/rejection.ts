import { SluiceError } from '@sluice/core';

/** The SluiceError a promise rejects with (any other rejection, or none, fails the test). */
export async function rejection(promise: Promise<unknown>): Promise<SluiceError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof SluiceError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}
