// Signed decisions a run took, so each is taken once. A signed steer,
// raiseBudget or reconcile sent again (a payload copied out of history, the
// same signature re-encoded) would otherwise act again: queue the message a
// second time, answer the next reconciliation of the same call. Remembered by
// the signed message's hash (common/signed-decision.ts messageKey), never by
// the signature's text, until the signature expires (an expired one is
// refused as expired before it is looked up here), and carried across
// continue-as-new. Approve and reject need none of this: their callKey names
// one occurrence of one call, which is decided once.
export class SignaturesUsed {
  /** messageKey → expiresAt (ISO). */
  private readonly used: Map<string, string>;

  constructor(carried: Record<string, string> = {}) {
    this.used = new Map(Object.entries(carried));
  }

  has(messageKey: string): boolean {
    return this.used.has(messageKey);
  }

  /** Remembers a decision just taken; forgets those expired (`nowMs`: the workflow's clock). */
  add(messageKey: string, expiresAt: string, nowMs: number): void {
    this.forgetExpired(nowMs);
    this.used.set(messageKey, expiresAt);
  }

  /** What the next execution carries (none expired), or undefined when nothing is. */
  carried(nowMs: number): Record<string, string> | undefined {
    this.forgetExpired(nowMs);
    return this.used.size > 0 ? Object.fromEntries(this.used) : undefined;
  }

  private forgetExpired(nowMs: number): void {
    for (const [key, expiresAt] of this.used) if (Date.parse(expiresAt) <= nowMs) this.used.delete(key);
  }
}
