// scan_archive: the demo's slow tool (a normal activity that heartbeats, so a
// Stop reaches it and a retry resumes after its last reported step).
import { defineTool, type ToolRun } from './define-tool.js';
import { NO_ARGS } from './parameters.js';

export const SCAN_TOTAL_FILES = 1200;
export const SCAN_STEP_FILES = 200;
export const SCAN_STEP_MS = 500;

/**
 * Deliberately slow (≈3 s): progress every 500 ms, stops at once when the run
 * is cancelled, and a retry after a crash resumes after the last step it
 * reported instead of scanning again from the start.
 */
export const scanArchive: ToolRun = async (ctx) => {
  for (let done = SCAN_STEP_FILES * (ctx.resumeFromStep + 1); done <= SCAN_TOTAL_FILES; done += SCAN_STEP_FILES) {
    await ctx.sleep(SCAN_STEP_MS);
    ctx.progress(`scanned ${done} of ${SCAN_TOTAL_FILES} files`);
  }
  return `scanned ${SCAN_TOTAL_FILES} files in 3 archives: no corrupt files found.`;
};

export default defineTool({
  name: 'scan_archive',
  description: 'Scan the archive for corrupt files. Slow: takes a few seconds.',
  parameters: NO_ARGS,
  readOnly: true,
  origin: 'builtin',
  run: scanArchive,
});
