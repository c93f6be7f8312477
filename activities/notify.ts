// The notification activity: one event of one parking, POSTed to one of the
// worker's routes (AgentPlugin `notify`, AGENT_NOTIFY_URL). It is an activity
// so that it is durable: scheduled by the workflow, retried by Temporal until
// the receiver answers 2xx, never sent again by a replay (its completion is
// in history), and sent again after a worker crash only with the same
// Idempotency-Key (made in workflow code, workflows/notify.ts), so a receiver
// drops repeats. docs/operations.md, "Notifications", describes what a
// receiver gets.
import { ApplicationFailure } from '@temporalio/activity';
import type { NotifyInput, NotifyOutcome } from '../common/activity-contract.js';
import type { NotifyEvent, NotifySetting } from '../common/contract.js';

/** How long one delivery waits for the receiver's answer (headers): a receiver that hangs costs one attempt, then Temporal retries. */
export const NOTIFY_ATTEMPT_TIMEOUT_MS = 10_000;
/** Arguments beyond this are cut in a Slack message (Slack refuses a section text over 3000 characters). */
const SLACK_ARGS_CHARS = 2000;

const HEADLINES: Record<NotifyEvent, string> = {
  approval_required: 'waits for an approval',
  budget_required: 'waits for a budget raise',
  reconciliation_required: 'waits for a person to reconcile a write',
  approval_escalated: 'still waits for an approval (escalated)',
};

export interface NotifyDeps {
  notify: NotifySetting | null;
  /** The worker encrypts payloads (AGENT_PAYLOAD_KEYS): nothing of an argument is sent, whatever the workflow passed. */
  payloadsEncrypted: boolean;
}

/** The contract's JSON body (docs/operations.md, "Notifications"), `args` only when payloads are not encrypted. */
export function notificationBody(input: NotifyInput, inboxUrl: string | null, payloadsEncrypted: boolean): Record<string, unknown> {
  const { event, workflowId, callId, toolName, argsHash, expiresAt, parkedAt } = input;
  const args = !payloadsEncrypted && input.args !== undefined ? { args: input.args } : {};
  return { event, workflowId, callId, toolName, argsHash, expiresAt, inboxUrl: inboxFor(inboxUrl, workflowId), parkedAt, ...args };
}

/** Slack's incoming-webhook shape: `text` (the notification's fallback line) and `blocks`. */
export function slackBody(input: NotifyInput, inboxUrl: string | null, payloadsEncrypted: boolean): { text: string; blocks: unknown[] } {
  const what = input.toolName ? ` \`${input.toolName}\` (call ${input.callId ?? '?'})` : '';
  const inbox = inboxFor(inboxUrl, input.workflowId);
  const text = `Agent run ${input.workflowId} ${HEADLINES[input.event]}${what}${inbox ? `: ${inbox}` : ''}`;
  const facts = [
    `*event:* ${input.event}`,
    ...(input.argsHash ? [`*argsHash:* \`${input.argsHash}\``] : []),
    `*expires:* ${input.expiresAt ?? 'never'}`,
  ].join(' · ');
  const argsText = !payloadsEncrypted && input.args !== undefined ? JSON.stringify(input.args) : null;
  const blocks: unknown[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `*Agent run \`${input.workflowId}\`* ${HEADLINES[input.event]}${what}` } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: facts }] },
    ...(argsText !== null ? [{ type: 'section', text: { type: 'mrkdwn', text: `\`\`\`${argsText.length > SLACK_ARGS_CHARS ? `${argsText.slice(0, SLACK_ARGS_CHARS)}…` : argsText}\`\`\`` } }] : []),
    ...(inbox ? [{ type: 'section', text: { type: 'mrkdwn', text: `<${inbox}|Open the inbox>` } }] : []),
  ];
  return { text, blocks };
}

/** The inbox link for the run: AGENT_OPS_URL with `?run=<workflowId>`; null when no inbox is configured. */
function inboxFor(inboxUrl: string | null, workflowId: string): string | null {
  if (!inboxUrl) return null;
  const u = new URL(inboxUrl);
  u.searchParams.set('run', workflowId);
  return u.toString();
}

/**
 * The activity. Any answer but a 2xx throws a retryable failure: a 4xx too
 * (a receiver misconfigured, a token rotated: the event waits until someone
 * fixes it rather than being dropped), and a 3xx, which is not followed (a
 * webhook that redirects elsewhere would carry the run's details to a host
 * nobody configured). The receiver's body is never read: a huge answer costs
 * nothing.
 */
export function createNotifyParked(deps: NotifyDeps) {
  return async function notifyParked(input: NotifyInput): Promise<NotifyOutcome> {
    const route = deps.notify?.routes[input.route];
    // The worker's routes changed since the run recorded them: nothing to deliver to; said, not retried forever.
    if (!route) return { delivered: false, reason: `this worker has no notify route ${input.route}` };
    const inbox = deps.notify?.inboxUrl ?? null;
    const body = (route.format ?? 'json') === 'slack' ? slackBody(input, inbox, deps.payloadsEncrypted) : notificationBody(input, inbox, deps.payloadsEncrypted);
    let res: Response;
    try {
      res = await fetch(route.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': input.idempotencyKey, 'user-agent': 'temporal-agent-harness' },
        body: JSON.stringify(body),
        redirect: 'manual',
        signal: AbortSignal.timeout(NOTIFY_ATTEMPT_TIMEOUT_MS),
      });
    } catch (err) {
      throw ApplicationFailure.retryable(`notify ${input.event}: ${routeName(route.url)} did not answer: ${(err as Error).message}`, 'NotifyUnreachable');
    }
    // Never read: the status is the whole answer.
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { delivered: true, status: res.status };
    const redirect = res.status >= 300 && res.status < 400 ? ` (a redirect, not followed${res.headers.get('location') ? `, to ${routeName(res.headers.get('location') ?? '')}` : ''})` : '';
    throw ApplicationFailure.retryable(`notify ${input.event}: ${routeName(route.url)} answered ${res.status}${redirect}; retried until it answers 2xx`, 'NotifyRefused');
  };
}

/** A route named in an error by its origin only: a webhook URL's path is often its secret (Slack's). */
function routeName(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the route';
  }
}
