// Which model-call failures an outage explains, shared by the workflow (it
// waits those out: workflows/outage-wait.ts) and by resume (a run that
// failed on one may be resumed once the provider is back). The types are the
// ones the model activity gives its failures (activities/ai-sdk-model.ts failureOf).

/** The provider did not answer (refused, reset, DNS): the network or the provider is down. */
export const PROVIDER_UNREACHABLE = 'ProviderUnreachable';
/** A 5xx, or any status that is neither a verdict on the request nor a rate limit. */
export const PROVIDER_UNAVAILABLE = 'ProviderUnavailable';
/** 429: retried after its Retry-After. */
export const PROVIDER_RATE_LIMITED = 'ProviderRateLimited';
/** The call hung past its timeout, or its worker stopped heartbeating (named by the workflow, not the activity). */
export const PROVIDER_TIMEOUT = 'ProviderTimeout';

/** A 404, or a provider that says it has no such model: not retried, the message names the model. */
export const PROVIDER_UNKNOWN_MODEL = 'ProviderUnknownModel';
/** A reply that is not what the protocol says (a stream with an error part, cut short, a body that is not JSON): retried, nothing charged. */
export const PROVIDER_MALFORMED_REPLY = 'ProviderMalformedReply';

/**
 * The one table of HTTP statuses that are a verdict on the request, not an
 * outage: retrying cannot fix them, so they are not retried. Every provider
 * (the built-in chat-completions one and the AI SDK's packages alike) is
 * classified by it (activities/ai-sdk-model.ts failureOf); 429 and every
 * other status are the transient types below.
 */
export const PROVIDER_VERDICTS: Readonly<Record<number, string>> = {
  400: 'ProviderBadRequest',
  401: 'ProviderUnauthorized',
  403: 'ProviderForbidden',
  404: PROVIDER_UNKNOWN_MODEL,
  422: 'ProviderBadRequest',
};

const TRANSIENT: ReadonlySet<string> = new Set([PROVIDER_UNREACHABLE, PROVIDER_UNAVAILABLE, PROVIDER_RATE_LIMITED, PROVIDER_TIMEOUT]);

export const isTransientProviderError = (errorType: string | null | undefined): boolean => errorType !== null && errorType !== undefined && TRANSIENT.has(errorType);

/**
 * How long a run waits out a provider that stays down, by default: 6 hours.
 * The longest whole-API incidents the large providers have published lasted
 * a few hours (OpenAI's of 11 December 2024: about four and a half hours from
 * the first errors to full recovery); 6 h covers such a day with margin and
 * still ends a run whose provider is gone for good the same working day.
 * Waiting costs about 2.4 Actions a minute (docs/cost.md).
 */
export const DEFAULT_MODEL_OUTAGE_MS = 6 * 60 * 60 * 1000;

/** A tool call that hung past its timeout, or whose worker stopped heartbeating (named by the workflow). */
export const TOOL_TIMEOUT = 'ToolTimeout';

/**
 * How long a tool call waits out failures its own retries (5 attempts over
 * about 7.5 s) did not cure, by default: 6 hours, as for the model. What a
 * tool reaches (an MCP server, a team's service, a queue whose workers are
 * being redeployed) has outages of the same kind and length as a provider's,
 * and an unattended run loses more by failing at 3 a.m. than by waiting. A
 * tool's failure the model can act on is not waited out: the tool reports it
 * (ToolError) and the model reads it; only what the tool throws is, like a
 * Temporal activity retried until its cause is fixed, but visibly and within
 * a bound.
 */
export const DEFAULT_TOOL_OUTAGE_MS = 6 * 60 * 60 * 1000;
