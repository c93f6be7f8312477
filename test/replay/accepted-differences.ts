// Where replaying a saved history on today's code computes another input or
// result than the history recorded, on purpose: each entry names the change
// that caused it and the fixtures it touches. test/replay.test.ts fails on any
// difference not listed here, and on an entry that no longer matches anything
// (so the list only ever holds what is true). A change that alters what runs
// in flight would send or return adds its entry here, reviewed, or is fixed.
import type { Difference } from './compare.js';

export interface AcceptedDifference {
  why: string;
  /** The fixtures (file names without .json) it may occur in. */
  fixtures: RegExp;
  matches(d: Difference): boolean;
}

/** Fixtures recorded before the v2 naming (the first recordings). */
const FIRST = /^(?!v\d-)/;

const absentBefore = (at: RegExp, path: RegExp) => (d: Difference) => at.test(d.at) && path.test(d.path) && d.recorded === undefined && d.replayed !== undefined;

export const ACCEPTED_DIFFERENCES: AcceptedDifference[] = [
  {
    why: 'results carry definitionHash, computed in workflow code from the configuration history recorded (common/definition.ts); results recorded before it have none',
    fixtures: /./,
    matches: absentBefore(/^ending$/, /^result\.definitionHash$/),
  },
  {
    why:
      'activity inputs name the run by workflowId, its one name in code ("run id" is Temporal\'s, one execution); inputs scheduled before carry it as runId, ' +
      'which the activities still read (common/activity-contract.ts withWorkflowId)',
    fixtures: /./,
    matches: (d) =>
      / (callModel|callModelByAddress|callModelBudgeted|runTool|loadRun)$/.test(d.at) &&
      ((d.path === 'input[0].runId' && typeof d.recorded === 'string' && d.replayed === undefined) ||
        (d.path === 'input[0].workflowId' && d.recorded === undefined && typeof d.replayed === 'string')),
  },
  {
    why: 'a model turn\'s call names its turn (the live stream tells a turn\'s tokens by it); calls scheduled before carry none, and summaries none at all',
    fixtures: /./,
    matches: absentBefore(/ (callModel|callModelByAddress|callModelBudgeted)$/, /^input\[0\]\.turn$/),
  },
  {
    why: 'model and tool calls name the run chain (chainId) so that a reused workflow id gets its own trace file and effect keys; older calls carry none',
    fixtures: FIRST,
    matches: absentBefore(/ (callModel|runTool)$/, /^input\[0\]\.chainId$/),
  },
  {
    why:
      'effect keys name a call by its occurrence, counted by the workflow ("W@chain/call3"), whatever id the provider sent; ' +
      'older runs named it by message index and provider id ("W@chain/m1/c2"), and before chains by the workflow id alone ("W/m1/c2")',
    fixtures: /./,
    matches: (d) =>
      / runTool$/.test(d.at) &&
      d.path === 'input[0].idempotencyKey' &&
      /^[^@/]+(@[^/]+)?\/m\d+\/[^/]+$/.test(String(d.recorded)) &&
      /^[^@/]+@[^/]+\/call\d+$/.test(String(d.replayed)) &&
      String(d.recorded).split(/[@/]/)[0] === String(d.replayed).split('@')[0],
  },
  {
    why: 'the result gained errorType (null unless the run failed)',
    fixtures: /^(?!v[34]-)/,
    matches: absentBefore(/^ending$/, /^result\.errorType$/),
  },
  {
    why: 'the result gained workflowId, agentStatus and reason (one vocabulary for a run\'s state) and usageEstimatedTurns (replies without usage are priced from our own counts)',
    fixtures: /./,
    matches: absentBefore(/^ending$/, /^result\.(workflowId|agentStatus|reason|usageEstimatedTurns)$/),
  },
  {
    why: 'a run that timed out on an approval names the parked call\'s argsHash in its result\'s interruption (approvals bound to their arguments)',
    fixtures: /^(?!v5-)/,
    matches: absentBefore(/^ending$/, /^result\.interruption\.argsHash$/),
  },
  {
    why: 'the result gained the children\'s totals (one budget for the tree)',
    fixtures: FIRST,
    matches: absentBefore(/^ending$/, /^result\.children$/),
  },
  {
    why: 'costs are kept to a picodollar: the float noise of the first recordings is gone',
    fixtures: FIRST,
    matches: (d) => d.at === 'ending' && d.path === 'result.costUsd' && Math.abs(Number(d.recorded) - Number(d.replayed)) < 1e-12,
  },
  {
    why: 'a sub-agent is started with the parent\'s maxToolResultChars',
    fixtures: /^research$/,
    matches: absentBefore(/ child agentRun$/, /^input\[0\]\.maxToolResultChars$/),
  },
  {
    why: 'continue-as-new carries the configuration resolved once, the children\'s totals, the context window\'s last watermark',
    fixtures: /^(runaway-cap-40-continued|v2-runaway-continued-each-turn)$/,
    matches: (d) => d.at === 'ending' && /^continueAsNew\[1\]\.(cfg|state\.children|state\.messagesAtLastCall)$/.test(d.path) && d.recorded === undefined,
  },
  {
    why: 'continue-as-new no longer writes the carried state\'s version (1 or 2): nothing ever read it; what a carried state holds is told by its fields',
    fixtures: /./,
    matches: (d) => d.at === 'ending' && d.path === 'continueAsNew[1].version' && (d.recorded === 1 || d.recorded === 2) && d.replayed === undefined,
  },
  {
    why: 'continue-as-new carries the run chain\'s id: a reset run\'s chain is its own run id, which its later executions cannot learn from the server',
    // v5-runaway-continued too: fixtures v5 were recorded on branch bill before it merged main's carried call counter and chain id.
    fixtures: /^(runaway-cap-40-continued|v2-runaway-continued-each-turn|v3-bulky-window|v3-runaway-no-dedupe-continued|v5-runaway-continued)$/,
    matches: (d) => d.at === 'ending' && d.path === 'continueAsNew[1].chainId' && d.recorded === undefined && typeof d.replayed === 'string',
  },
  {
    why: 'continue-as-new carries the call counter (calls proposed so far, and where the last reply\'s calls start)',
    // v5-runaway-continued too: fixtures v5 were recorded on branch bill before it merged main's carried call counter and chain id.
    fixtures: /^(runaway-cap-40-continued|v2-runaway-continued-each-turn|v3-bulky-window|v3-runaway-no-dedupe-continued|v5-runaway-continued)$/,
    matches: (d) => d.at === 'ending' && /^continueAsNew\[1\]\.state\.(callsProposed|lastReplyFirstCall)$/.test(d.path) && d.recorded === undefined && typeof d.replayed === 'number',
  },
  {
    why: 'continue-as-new carries the live stream\'s window and offsets (workflows/run-stream.ts); executions before the stream carried none',
    fixtures: /continued|bulky-window/,
    matches: (d) => d.at === 'ending' && d.path === 'continueAsNew[1].stream' && d.recorded === undefined && typeof d.replayed === 'object' && d.replayed !== null,
  },
  {
    why: 'a tool stopped while it ran counts as a tool run and gets a "stopped" result (the truthful Stop): the first recording counted none',
    fixtures: /^slow-cancelled$/,
    matches: (d) => d.at === 'ending' && d.path === 'result.toolRuns' && d.recorded === 0 && d.replayed === 1,
  },
  {
    why:
      'the JSON-schema library\'s wording for bad arguments changed (ajv, then @cfworker/json-schema), and it is copied into the transcript the model sees: ' +
      'third-party text in workflow state (issue 15, "Replay depends on text the project does not own")',
    fixtures: /^v2-delete-bad-args$/,
    matches: (d) => / callModel$/.test(d.at) && /^input\[0\]\.messages\[\d+\]\.content$/.test(d.path) && String(d.recorded).startsWith('Error: invalid arguments for delete_file'),
  },
];

/** The entry that explains this difference in this fixture, if any. */
export function acceptedFor(fixture: string, d: Difference): AcceptedDifference | undefined {
  return ACCEPTED_DIFFERENCES.find((a) => a.fixtures.test(fixture) && a.matches(d));
}
