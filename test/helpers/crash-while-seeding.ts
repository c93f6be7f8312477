// A process that dies with SIGKILL after the first seed file of a new
// workspace is written, as a worker did in the crash matrix: the fault is
// injected here, through node:fs, not by a switch in shipped code.
// Usage: crash-while-seeding.ts <workspace root> <name>.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const write = fs.writeFileSync;
fs.writeFileSync = ((...args: Parameters<typeof write>) => {
  write(...args);
  if (String(args[0]).includes('.seeding-')) process.kill(process.pid, 'SIGKILL');
}) as typeof write;
// The named imports of node:fs (activities/tools/workspace.ts's) now see it too.
syncBuiltinESMExports();

const { ensureWorkspace } = await import('../../activities/tools/workspace.js');
ensureWorkspace(process.argv[2] ?? '', process.argv[3] ?? 'w');
