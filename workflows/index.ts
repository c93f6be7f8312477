// The workflow bundle's entry point: only deterministic code is reachable from here.
export { agentRun } from './agent-run.js';
/** What a run takes and answers, for a team's workflow that runs `agentRun` as a child (types only: nothing more enters the bundle). */
export type { AgentInput, RunResult, RunStatusView } from '../common/contract.js';
export type { ApproverPolicy, OtherDecision } from '../common/signed-decision.js';
