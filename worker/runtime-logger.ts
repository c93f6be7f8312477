// The process's log for a person. The SDK's own lifecycle chatter (worker
// state changes, and webpack's build report when the workflows are bundled at
// start) is kept below WARN; the core's messages arrive here (forwarded, so
// they are plain text, not ANSI-coloured) and the ones that only say a call
// to the server is being retried become one "lost the server" line.
import { DefaultLogger, type LogLevel, type LogMetadata, type Logger } from '@temporalio/worker';
import { transportFailure } from '../node/connection-errors.js';

const SEVERITY: Record<LogLevel, number> = { TRACE: 0, DEBUG: 1, INFO: 2, WARN: 3, ERROR: 4 };

export class RuntimeLogger implements Logger {
  private readonly out: DefaultLogger;

  /** `serverUnreachable`: told the reason each time the core says it cannot reach the server. */
  constructor(
    level: LogLevel,
    private readonly serverUnreachable: (reason: string) => void,
  ) {
    this.out = new DefaultLogger(level);
  }

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const component = meta?.sdkComponent;
    if (component === 'core') {
      const reason = transportFailure(`${message} ${String(meta?.error ?? '')}`);
      if (reason !== null) return this.serverUnreachable(reason);
    }
    if (component === 'worker' && SEVERITY[level] < SEVERITY.WARN) return;
    const failed = component === 'worker' && message === 'Workflow failed' ? failedRunLine(meta) : component === 'worker' && message === 'Activity failed' ? failedAttemptLine(meta) : null;
    if (failed !== null) return this.out.log(level, failed);
    this.out.log(level, message, meta);
  }

  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/**
 * The SDK's "Workflow failed" (a run that failed outright, such as one started
 * with invalid input) as one line naming the run and the error. The SDK logs
 * the error with its stack, 20 lines of SDK frames for a failure that is the
 * run's input's fault and that the run's result already names.
 */
function failedRunLine(meta: LogMetadata | undefined): string | null {
  const error = meta?.error;
  if (!(error instanceof Error)) return null;
  // The error crossed from the workflow thread as a plain Error (its class and type are not cloned): the stack's first line still names its class.
  const name = /^(\w+):/.exec(error.stack ?? '')?.[1] ?? error.name;
  return `run ${String(meta?.workflowId)} (${String(meta?.workflowType)}, run id ${String(meta?.runId)}) failed: ${name}: ${error.message}`;
}

/**
 * The SDK's "Activity failed" (one attempt of a model or tool call) as one
 * line: which call of which run, which attempt, after how long, and the
 * error's first line. The SDK logs the error with its stack, 30-odd lines of
 * SDK and HTTP-client frames per attempt: a provider outage of hours, retried
 * every minute, wrote thousands of them, and the run's trace already has each
 * attempt (`model_error`).
 */
function failedAttemptLine(meta: LogMetadata | undefined): string | null {
  const error = meta?.error;
  if (!(error instanceof Error)) return null;
  const type = (error as { type?: unknown }).type;
  const name = typeof type === 'string' && type !== '' ? `${error.name}(${type})` : error.name;
  const text = error.message.split('\n')[0].slice(0, 300);
  const ms = typeof meta?.durationMs === 'number' ? ` after ${Math.round(meta.durationMs)} ms` : '';
  return `${meta?.isLocal === true ? 'local activity' : 'activity'} ${String(meta?.activityType)} of run ${String(meta?.workflowId)} attempt ${String(meta?.attempt)} failed${ms}: ${name}: ${text}`;
}
