// The scripted provider's request log, bounded: at most `maxRequests`
// entries and `maxBytes` of what they keep (each body as JSON text, plus its
// task), the oldest dropped first and counted. Bodies are kept as the JSON
// text they are sent back as, so the log's size is what it says, and a
// listing splices them in without parsing them again.
import type { LoggedRequest } from './server.js';

/** How much the request log keeps; the oldest requests are dropped, and counted, past either limit. */
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
  /** The body in the kit's shape, as JSON text; null when it was too large to keep. */
  bodyText: string | null;
  bytes: number;
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

  constructor(private readonly limits: Required<RequestLogLimits>) {}

  /**
   * Logs a request (the entry stays live: its status is set later). A
   * request larger than the whole log is kept without its body
   * (`bodyOmitted`), its task cut to its first 1,024 characters.
   */
  add(entry: LoggedRequest, bodyText: string): void {
    let bytes = Buffer.byteLength(bodyText) + Buffer.byteLength(entry.task);
    let text: string | null = bodyText;
    if (bytes > this.limits.maxBytes) {
      text = null;
      entry.bodyOmitted = true;
      if (Buffer.byteLength(entry.task) > this.limits.maxBytes) entry.task = entry.task.slice(0, OVERSIZED_TASK_CHARS);
      bytes = Buffer.byteLength(entry.task);
    }
    this.kept.push({ entry, bodyText: text, bytes });
    this.bytes += bytes;
    while (this.kept.length > this.limits.maxRequests || (this.bytes > this.limits.maxBytes && this.kept.length > 1)) {
      const old = this.kept.shift();
      if (!old) break;
      this.bytes -= old.bytes;
      this.dropped += 1;
    }
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
    return { requests: this.kept.length, bytes: this.bytes, dropped: this.dropped, ...this.limits };
  }
}
