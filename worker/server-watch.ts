// Tells a person when a worker loses the Temporal server and when it has it
// back: one line each, where the SDK's core would print a retry warning per
// poller every second or so for as long as the outage lasts. Two signals feed
// it: the core's own retry warnings (runtime-logger.ts hands them here, so the
// loss is seen as soon as a poll fails to connect) and a health check on the
// worker's connection, which also notices a server that stops answering
// without refusing connections, and is what says the server is back.
import type { NativeConnection } from '@temporalio/worker';
import { unreachableReason } from '../node/connection-errors.js';

export interface ServerWatchOptions {
  /** Where the two lines go (default: stderr). */
  print?: (line: string) => void;
  /** Between health checks while the server answers. */
  intervalMs?: number;
  /** Between health checks while it does not. */
  retryMs?: number;
  /** How long one health check may take before the server counts as lost. */
  checkTimeoutMs?: number;
}

export class ServerWatch {
  private target: { connection: NativeConnection; address: string } | null = null;
  private lostAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking = false;
  private stopped = false;
  private readonly print: (line: string) => void;

  constructor(private readonly opts: ServerWatchOptions = {}) {
    this.print = opts.print ?? ((line) => console.error(line));
  }

  /** Starts checking the server behind `connection`; `address` is how the lines name it. */
  watch(connection: NativeConnection, address: string): void {
    this.target = { connection, address };
    this.schedule(this.opts.intervalMs ?? 5000);
  }

  /** The server could not be reached: a failed check, or the SDK's word that a call is being retried. */
  lost(reason: string): void {
    // Before watch(): the connect attempt reports its own failure.
    if (!this.target || this.stopped || this.lostAt !== null) return;
    this.lostAt = Date.now();
    this.print(`lost the Temporal server at ${this.target.address} (${reason}); the worker keeps retrying: check that the server is running`);
    this.schedule(this.opts.retryMs ?? 1000);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    // Never what keeps the process alive.
    this.timer = setTimeout(() => void this.check(), ms).unref();
  }

  private async check(): Promise<void> {
    const target = this.target;
    if (!target || this.checking || this.stopped) return;
    this.checking = true;
    try {
      const deadline = Date.now() + (this.opts.checkTimeoutMs ?? 10_000);
      await target.connection.withDeadline(deadline, () => target.connection.healthService.check({}));
      if (this.lostAt !== null && !this.stopped) {
        this.print(`reconnected to the Temporal server at ${target.address} after ${Math.round((Date.now() - this.lostAt) / 1000)} s`);
        this.lostAt = null;
      }
    } catch (err) {
      this.lost(unreachableReason(String(err)));
    } finally {
      this.checking = false;
      this.schedule(this.lostAt === null ? (this.opts.intervalMs ?? 5000) : (this.opts.retryMs ?? 1000));
    }
  }
}
