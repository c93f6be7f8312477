// The tool catalogue as data: what the model is told (name, description, JSON
// schema) and what the loop needs to know (read-only? needs approval?). The
// implementations live in activities/tools; this file stays free of I/O so the
// workflow can import it.
import type { ToolName } from './types';

export interface JsonSchema {
  type: 'object';
  properties: Record<string, { type: string; description?: string; minLength?: number; maxLength?: number }>;
  required: string[];
  additionalProperties: false;
}

export interface ToolSpec {
  name: ToolName;
  description: string;
  parameters: JsonSchema;
  /** Safe to cache: calling it twice with the same arguments changes nothing. */
  readOnly: boolean;
  /** The run stops as interrupted/approval until a person decides. */
  needsApproval: boolean;
  /**
   * Fast and side-effect-free: runs as a local activity, in the worker that
   * runs the loop, with no server round trip of its own (at-least-once, so
   * never for writes; no heartbeats, so never for slow tools).
   */
  local: boolean;
}

const pathArg = { type: 'string', minLength: 1, maxLength: 512, description: 'A path relative to the workspace.' };
const noArgs: JsonSchema = { type: 'object', properties: {}, required: [], additionalProperties: false };

export const TOOL_SPECS: Record<ToolName, ToolSpec> = {
  list_files: {
    name: 'list_files',
    description: 'List the files in the workspace with their sizes in bytes.',
    parameters: noArgs,
    readOnly: true,
    needsApproval: false,
    local: true,
  },
  read_file: {
    name: 'read_file',
    description: 'Read a text file from the workspace.',
    parameters: { type: 'object', properties: { path: pathArg }, required: ['path'], additionalProperties: false },
    readOnly: true,
    needsApproval: false,
    local: true,
  },
  delete_file: {
    name: 'delete_file',
    description: 'Delete a file from the workspace. A person must approve each call.',
    parameters: { type: 'object', properties: { path: pathArg }, required: ['path'], additionalProperties: false },
    readOnly: false,
    needsApproval: true,
    local: false,
  },
  scan_archive: {
    name: 'scan_archive',
    description: 'Scan the archive for corrupt files. Slow: takes a few seconds.',
    parameters: noArgs,
    readOnly: true,
    needsApproval: false,
    local: false,
  },
  research: {
    name: 'research',
    description: 'Delegate a research question to a sub-agent that can list and read files.',
    parameters: {
      type: 'object',
      properties: { question: { type: 'string', minLength: 1, maxLength: 2000 } },
      required: ['question'],
      additionalProperties: false,
    },
    readOnly: true,
    needsApproval: false,
    local: false,
  },
};

export const TOOL_NAMES = Object.keys(TOOL_SPECS) as ToolName[];

export function isToolName(name: string): name is ToolName {
  return Object.prototype.hasOwnProperty.call(TOOL_SPECS, name);
}

/** The `tools` array of a chat-completions request. */
export function toolDefinitions(names: readonly ToolName[]): OpenAiToolDefinition[] {
  return names.map((n) => ({
    type: 'function',
    function: { name: n, description: TOOL_SPECS[n].description, parameters: TOOL_SPECS[n].parameters },
  }));
}

export interface OpenAiToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema };
}
