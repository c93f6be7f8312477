// `npm run bench:notify`: how long after a run parks its webhook arrives. N
// `destructive` runs (each parks on its delete) on a worker whose `notify`
// route is a real HTTP receiver in this process; for each, the time from the
// parking (the `parkedAt` the workflow stamps, workflow time) to the
// receiver having the whole body. Runs are started a few at a time, then
// stopped. Same machine, same clock: no skew.
//   NOTIFY_RUNS (default 60), NOTIFY_CONCURRENCY (default 4), NOTIFY_REPORT (default reports/notify.md)
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { cancelSignal } from '../common/run-messages.js';
import { startReceiver } from '../test/helpers/webhook-receiver.js';
import { startBenchStack } from './stack.js';

const N = Number(process.env.NOTIFY_RUNS ?? 60);
const CONCURRENCY = Number(process.env.NOTIFY_CONCURRENCY ?? 4);
const REPORT = process.env.NOTIFY_REPORT ?? 'reports/notify.md';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

const receiver = await startReceiver();
const stack = await startBenchStack({ toolset: null, worker: { notify: { routes: [{ url: `${receiver.url}/hook` }] } } });
const running = stack.worker.run();
const latencies: number[] = [];
try {
  let next = 0;
  const one = async () => {
    for (let i = next++; i < N; i = next++) {
      const id = `notify-bench-${i}-${randomUUID().slice(0, 6)}`;
      const handle = await stack.client.workflow.start('agentRun', { taskQueue: stack.taskQueue, workflowId: id, args: [{ task: 'Which file mentions a timeout?', model: 'destructive', workspace: `ws-${i}` }] });
      for (;;) {
        const d = receiver.of(id)[0];
        if (d) {
          latencies.push(d.at - Date.parse(String(d.body.parkedAt)));
          break;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      await handle.signal(cancelSignal, { reason: 'bench done' });
      await handle.result();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, one));
} finally {
  stack.worker.shutdown();
  await running;
  await stack.close();
  await receiver.close();
}
const dupes = receiver.deliveries.length - new Set(receiver.deliveries.map((d) => d.key)).size;
const line = `| ${N} | ${CONCURRENCY} | ${pct(latencies, 50)} | ${pct(latencies, 95)} | ${Math.max(...latencies)} | ${receiver.deliveries.length} | ${dupes} |`;
const text = `# Park to webhook (bench/notify.ts)

Time from a run parking on an approval (the workflow's \`parkedAt\`) to the
webhook's body having arrived at a local receiver, in ms. One in-process
worker, dev server and scripted provider on this machine (${new Date().toISOString().slice(0, 10)}, 2 shared cores).

| runs | concurrent | p50 ms | p95 ms | max ms | deliveries | repeats |
|---|---|---|---|---|---|---|
${line}
`;
mkdirSync(dirname(REPORT), { recursive: true });
writeFileSync(REPORT, text);
console.log(text);
