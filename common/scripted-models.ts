// The model names the scripted provider (dev/provider) answers to. Workers
// price them at the default rate, so a hard budget can bound a scripted run;
// the provider's scenario table is typed by this list, so the two cannot drift.
/** The scenarios of the scripted provider: a run picks one by its input's `model`. */
export const SCRIPTED_MODELS = [
  'plan', 'script', 'runaway', 'runaway_wide', 'overbill', 'bulky', 'recover', 'forbidden', 'duplicate', 'destructive',
  'destructive_twice', 'list_delete_list', 'same_call_id', 'slow', 'mcp', 'research', 'tree', 'read', 'bad_json_args',
  'unknown_tool', 'bad_schema', 'huge_args', 'three_calls', 'empty_reply', 'delete_bad_args',
  'research_bad_args', 'research_runaway', 'delegate_runaway', 'missing_call', 'missing_result', 'narrated',
  'long_call_id', 'research_long_id', 'control_call_id', 'deep_args',
  'reused_call_id',
  'structured', 'structured_never', 'huge_json',
] as const;

/** One scenario name of {@link SCRIPTED_MODELS}. */
export type ScriptedModel = (typeof SCRIPTED_MODELS)[number];
