// Entry point of the `agent-harness` bin and of `npm run cli`.
import { main } from './cli';

process.exitCode = await main(process.argv.slice(2));
// The Temporal connection keeps the event loop alive; the command is done.
process.exit();
