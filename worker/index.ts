// The package's worker entry (`temporal-agent-harness/worker`): what a team
// needs to run the harness's activities and the `agentRun` workflow in a
// worker of its own. Everything else under worker/ is internal.
export { createAgentWorker, type AgentWorkerOptions } from './create-worker.js';
export { Toolset } from '../activities/tools/toolset.js';
export { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
export type { EffectStore } from '../activities/effects/record.js';
export type { WriteHooks } from '../activities/tools/context.js';
export type { Tracing } from '../common/tracing.js';
export type { WorkerVersioning, VersioningBehaviorName } from '../common/config.js';
export type { Pricing, RunDefaults } from '../common/contract.js';
