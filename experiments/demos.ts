// `npm run demos`: chapter 003's demos, with no network and no API key: the
// normal loop, the two protocol breaks (a result with no recorded call, a
// call with no result), a tool error and its recovery, and the turn cap. Each
// runs with --debug, so every request is printed with its numbered messages;
// the protocol breaks also show what the provider says to the broken
// transcript the harness refused to build.
import { runAndFollow } from '../client/follow.js';
import type { AgentInput } from '../common/contract.js';
import { startBenchStack } from '../bench/stack.js';

const stack = await startBenchStack();
const task = 'Which file mentions a timeout?';

const demos: [string, string, AgentInput][] = [
  ['normal', 'the whole loop: list, read, answer', { task, model: 'plan' }],
  ['missing-call', 'a result with no recorded request: the reply names no call id', { task, model: 'missing_call' }],
  ['missing-result', 'a request with no result: two calls share one id', { task, model: 'missing_result' }],
  ['tool-error', 'a missing file, described to the model, which recovers', { task, model: 'recover', toolErrors: 'describe' }],
  ['max-turns', 'a model that never answers, stopped by the turn cap', { task, model: 'runaway', limits: { maxTurns: 3 } }],
];

/** What the provider answers to the transcript the harness refused to send. */
async function providerVerdict(messages: unknown[]): Promise<string> {
  const res = await fetch(`${stack.providerUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'plan', messages }),
  });
  const body = (await res.json()) as { error?: { message?: string } };
  return `${res.status}: ${body.error?.message ?? 'ok'}`;
}

const broken: Record<string, unknown[]> = {
  'missing-call': [
    { role: 'user', content: task },
    { role: 'tool', tool_call_id: 'c1', content: 'access.log errors.log notes.txt' },
  ],
  'missing-result': [
    { role: 'user', content: task },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_files', arguments: '{}' } }] },
    { role: 'user', content: 'and?' },
  ],
};

await stack.worker.runUntil(async () => {
  for (const [name, what, input] of demos) {
    console.log(`\n=== ${name}: ${what}`);
    await runAndFollow(stack.client, { ...input, debug: true }, { taskQueue: stack.taskQueue, traceDir: stack.traceDir, workflowId: `demo-${name}-${Date.now()}` });
    const b = broken[name];
    if (b) console.log(`the transcript the harness refused to build, sent as is, gets ${await providerVerdict(b)}`);
  }
});
await stack.close();
