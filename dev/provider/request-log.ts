// The scripted provider's request log, bounded: at most `maxRequests`
// entries and `maxBytes` of what they keep (each body as JSON text, plus its
// task). Past `maxBytes` the oldest bodies go first (their entries stay, with
// status and facts, so a test waiting on a request's status is not starved by
// another test's large bodies), then, if tasks alone still exceed it, the
// oldest entries; past `maxRequests` the oldest entries go. Each drop is
// counted. Bodies are kept as the JSON text they are sent back as, so the
// log's size is what it says, and a listing splices them in without parsing
// them again.
import type { LoggedRequest } from './server.js';

/** How much the request log keeps: past `maxBytes` the oldest bodies are dropped, then the oldest requests; past `maxRequests` the oldest requests. Each drop is counted. */
export interface RequestLogLimits {
  /** At most this many requests (default 10,000). */
  maxRequests?: number;
  /** At most this many bytes of bodies and tasks, as UTF-8 (default 64 MiB). */
  maxBytes?: number;
}

/** What the log holds now and what it dropped (GET /_control/log). */
export interface RequestLogStats {
  /** Requests in the log. */
  requests: number;
  /** Bytes their bodies and tasks take, as UTF-8. */
  bytes: number;
  /** Requests dropped since the provider started, oldest first, to stay within the limits. */
  dropped: number;
  /** Bodies dropped (their requests kept, with `bodyOmitted`), oldest first, to stay within `maxBytes`: a body too large for the log on its own included. */
  bodiesDropped: number;
  /** The count limit in force. */
  maxRequests: number;
  /** The bytes limit in force. */
  maxBytes: number;
}

export const DEFAULT_LOG_LIMITS = { maxRequests: 10_000, maxBytes: 64 * 1024 * 1024 } as const;
/** What is left of the task of a request too large for the log on its own: enough to match a marker in it. */
const OVERSIZED_TASK_CHARS = 1024;

interface Kept {
  entry: LoggedRequest;
  /** The body in the kit's shape, as JSON text; null once dropped (or when it was too large to keep). */
  bodyText: string | null;
  /** Its task's bytes, as UTF-8. */
  taskBytes: number;
  /** Its body's bytes (0 once dropped). */
  bodyBytes: number;
}

/** The limits, each a positive integer, or an error naming the option. */
export function logLimitsOf(limits: RequestLogLimits | undefined, prefix = 'log'): Required<RequestLogLimits> {
  const out = { ...DEFAULT_LOG_LIMITS, ...limits };
  for (const key of ['maxRequests', 'maxBytes'] as const) {
    const v: unknown = out[key];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new Error(`${prefix}.${key} must be a positive integer, got ${JSON.stringify(v) ?? String(v)}`);
  }
  return out;
}

export class RequestLog {
  private kept: Kept[] = [];
  private bytes = 0;
  private dropped = 0;
  private bodiesDropped = 0;
  /** Every entry before this index has lost its body: bodies go oldest first. */
  private firstBody = 0;

  constructor(private readonly limits: Required<RequestLogLimits>) {}

  /**
   * Logs a request (the entry stays live: its status is set later). A
   * request larger than the whole log is kept without its body
   * (`bodyOmitted`), its task cut to its first 1,024 characters.
   */
  add(entry: LoggedRequest, bodyText: string): void {
    let taskBytes = Buffer.byteLength(entry.task);
    let bodyBytes = Buffer.byteLength(bodyText);
    let text: string | null = bodyText;
    if (taskBytes + bodyBytes > this.limits.maxBytes) {
      text = null;
      bodyBytes = 0;
      entry.bodyOmitted = true;
      this.bodiesDropped += 1;
      if (taskBytes > this.limits.maxBytes) {
        entry.task = entry.task.slice(0, OVERSIZED_TASK_CHARS);
        taskBytes = Buffer.byteLength(entry.task);
      }
    }
    this.kept.push({ entry, bodyText: text, taskBytes, bodyBytes });
    this.bytes += taskBytes + bodyBytes;
    while (this.kept.length > this.limits.maxRequests) this.dropOldest();
    // The oldest bodies first, then (tasks alone over the limit) the oldest entries.
    while (this.bytes > this.limits.maxBytes && this.firstBody < this.kept.length) {
      const k = this.kept[this.firstBody++];
      if (k.bodyText === null) continue;
      this.bytes -= k.bodyBytes;
      k.bodyText = null;
      k.bodyBytes = 0;
      k.entry.bodyOmitted = true;
      this.bodiesDropped += 1;
    }
    while (this.bytes > this.limits.maxBytes && this.kept.length > 1) this.dropOldest();
  }

  private dropOldest(): void {
    const old = this.kept.shift();
    if (!old) return;
    this.bytes -= old.taskBytes + old.bodyBytes;
    this.dropped += 1;
    this.firstBody = Math.max(0, this.firstBody - 1);
  }

  /** The entries whose task includes the marker (every one without), as the JSON array text GET /_control/requests answers. */
  json(marker: string | null): string {
    const parts: string[] = [];
    for (const k of this.kept) {
      if (marker && !k.entry.task.includes(marker)) continue;
      const facts = JSON.stringify(k.entry);
      // `{...facts, "body": <text>}` without parsing the body again.
      parts.push(k.bodyText === null ? facts : `${facts.slice(0, -1)},"body":${k.bodyText}}`);
    }
    return `[${parts.join(',')}]`;
  }

  stats(): RequestLogStats {
    return { requests: this.kept.length, bytes: this.bytes, dropped: this.dropped, bodiesDropped: this.bodiesDropped, ...this.limits };
  }
}
