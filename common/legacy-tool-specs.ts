// FROZEN. The tool catalogue as runs recorded before tool modules saw it:
// those runs' configurations name their tools but carry no specs, so a replay
// of their histories (test/fixtures/histories) and a run still in flight
// across the deploy that introduced tool modules take the specs from here.
// New runs get their specs from the worker (activities/tools/*.ts) at their
// start. Never edit this to change a tool: edit the tool's module.
import type { JsonSchema, ToolSpec } from './tool-spec.js';

const pathArg = { type: 'string', minLength: 1, maxLength: 512, description: 'A path relative to the workspace.' };
const noArgs: JsonSchema = { type: 'object', properties: {}, required: [], additionalProperties: false };
const pathOnly: JsonSchema = { type: 'object', properties: { path: pathArg }, required: ['path'], additionalProperties: false };

export const LEGACY_TOOL_SPECS: readonly ToolSpec[] = [
  { name: 'list_files', description: 'List the files in the workspace with their sizes in bytes.', parameters: noArgs, readOnly: true, needsApproval: false, activity: { local: true } },
  { name: 'read_file', description: 'Read a text file from the workspace.', parameters: pathOnly, readOnly: true, needsApproval: false, activity: { local: true } },
  { name: 'delete_file', description: 'Delete a file from the workspace. A person must approve each call.', parameters: pathOnly, readOnly: false, needsApproval: true },
  { name: 'scan_archive', description: 'Scan the archive for corrupt files. Slow: takes a few seconds.', parameters: noArgs, readOnly: true, needsApproval: false },
  {
    name: 'research',
    description: 'Delegate a research question to a sub-agent that can list and read files.',
    parameters: { type: 'object', properties: { question: { type: 'string', minLength: 1, maxLength: 2000 } }, required: ['question'], additionalProperties: false },
    readOnly: true,
    needsApproval: false,
    subAgent: { taskArgument: 'question', tools: ['list_files', 'read_file'], limits: { maxTurns: 6 } },
    enabledByDefault: false,
  },
];
