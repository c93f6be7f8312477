// The least a decision can cost on Temporal, by shape: a run parked on an
// update, then 0, 1 or 2 activities that do nothing, then its end. The floor
// under bench/decisions.ts's figure for our loop (reports/turn-account.md).
import * as wf from '@temporalio/workflow';
import type * as activities from './activities.js';

export const decideUpdate = wf.defineUpdate<string, [string]>('decide');
const { nothing } = wf.proxyActivities<typeof activities>({ startToCloseTimeout: '1 minute' });

export async function decisionShape(activityCount: number): Promise<string> {
  let decided = false;
  wf.setHandler(decideUpdate, (by) => {
    decided = true;
    return `decided by ${by}`;
  });
  await wf.condition(() => decided);
  for (let i = 0; i < activityCount; i++) await nothing(i);
  return 'done';
}
