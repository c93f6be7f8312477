// Entry point of the `agent-harness` bin and of `npm run cli`.
import { main } from './cli.js';
import { stopTracing } from '../node/tracing.js';

// `agent-harness run | head`: a closed pipe ends the output, not with a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

process.exitCode = await main(process.argv.slice(2));
// Spans still batched (the run's start) are sent before the process ends.
await stopTracing();
// The Temporal connection keeps the event loop alive; the command is done.
process.exit();
