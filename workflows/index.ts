// The workflow bundle's entry point: only deterministic code is reachable from here.
export { agentRun } from './agent-run.js';
