import type { Ledger } from './ledger';

/** What a tool implementation gets from the activity that runs it. */
export interface ToolContext {
  /** Real path of the run's workspace; every path must stay inside it. */
  root: string;
  /** One per logical operation (the tool call), stable across retries. */
  idempotencyKey: string;
  ledger: Ledger;
  /** Fires when the run is cancelled; tools that wait must listen. */
  signal: AbortSignal;
  /** Reports progress to the trace and the heartbeat. */
  progress(label: string): void;
  /** A sleep that throws at once when the run is cancelled. */
  sleep(ms: number): Promise<void>;
  /** The last step an earlier attempt of this call reported (0 on the first attempt). */
  resumeFromStep: number;
}

export type ToolImpl = (ctx: ToolContext, args: Record<string, unknown>) => Promise<string>;
