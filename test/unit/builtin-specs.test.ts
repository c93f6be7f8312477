// What the model is shown of each built-in tool, and what every run records in
// its configuration: a change here changes new runs' histories and what the
// model reads, so it is pinned byte for byte, whatever the code that builds it.
import { describe, expect, it } from 'vitest';
import { BUILTIN_SPECS } from '../helpers/builtin-specs.js';

const PATH = '{"type":"string","minLength":1,"maxLength":512,"description":"A path relative to the workspace."}';
const NO_ARGS = '{"type":"object","properties":{},"required":[],"additionalProperties":false}';

describe('the built-in tool specs', () => {
  it.each([
    ['list_files', `{"name":"list_files","description":"List the files in the workspace with their sizes in bytes.","parameters":${NO_ARGS},"readOnly":true,"needsApproval":false,"activity":{"local":true},"origin":"builtin"}`],
    ['read_file', `{"name":"read_file","description":"Read a text file from the workspace.","parameters":{"type":"object","properties":{"path":${PATH}},"required":["path"],"additionalProperties":false},"readOnly":true,"needsApproval":false,"activity":{"local":true},"origin":"builtin"}`],
    ['delete_file', `{"name":"delete_file","description":"Delete a file from the workspace. A person must approve each call.","parameters":{"type":"object","properties":{"path":${PATH}},"required":["path"],"additionalProperties":false},"readOnly":false,"needsApproval":true,"origin":"builtin"}`],
    ['scan_archive', `{"name":"scan_archive","description":"Scan the archive for corrupt files. Slow: takes a few seconds.","parameters":${NO_ARGS},"readOnly":true,"needsApproval":false,"origin":"builtin"}`],
    ['research', '{"name":"research","description":"Delegate a research question to a sub-agent that can list and read files.","parameters":{"type":"object","properties":{"question":{"type":"string","minLength":1,"maxLength":2000}},"required":["question"],"additionalProperties":false},"readOnly":true,"needsApproval":false,"subAgent":{"taskArgument":"question","tools":["list_files","read_file"]},"enabledByDefault":false,"origin":"builtin"}'],
  ])('%s is offered exactly as runs recorded it', (name, json) => {
    expect(JSON.stringify(BUILTIN_SPECS.find((s) => s.name === name))).toBe(json);
  });

  it('no other built-in tool appears unpinned', () => {
    expect(BUILTIN_SPECS.map((s) => s.name)).toEqual(['list_files', 'read_file', 'delete_file', 'scan_archive', 'research']);
  });
});
