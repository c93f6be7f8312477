// One process of test/trace-writers.test.ts: a trace writer or a reader of one run's trace.
//   writer DIR NAME COUNT  says it is ready (DIR/ready-NAME), waits for DIR/go, then writes seq 1..COUNT: each workflow line (content of its own, so the
//                          other writer's line for that seq is replaced: the rewrite path), a
//                          progress line of its own attempt, and every line twice (the repeat dropped).
//   reader DIR STOP_FILE   reads the trace until STOP_FILE exists; prints what it saw go wrong.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TraceWriter } from '../../activities/trace-file.js';
import { lineKey, readTrace } from '../../node/trace-format.js';

export const RUN = 'run/two-writers';
export const CHAIN = 'chain-1';
const [mode, dir, arg, countArg] = process.argv.slice(2);

if (mode === 'writer') {
  const w = new TraceWriter(dir);
  const attempt = arg === 'A' ? 1 : 2;
  const counts = { appended: 0, duplicate: 0, replaced: 0 };
  // Both start writing at the same moment, whatever each one's start-up took.
  writeFileSync(join(dir, `ready-${arg}`), '');
  while (!existsSync(join(dir, 'go'))) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
  const startedAt = Date.now();
  for (let seq = 1; seq <= Number(countArg); seq++) {
    for (let repeat = 0; repeat < 2; repeat++) {
      counts[w.write(RUN, CHAIN, { seq, type: 'turn', turn: seq, by: arg })] += 1;
      counts[w.write(RUN, CHAIN, { seq, step: 1, attempt, type: 'tool_progress', by: arg })] += 1;
    }
  }
  console.log(JSON.stringify({ ...counts, startedAt, endedAt: Date.now() }));
} else if (mode === 'reader') {
  const problems: string[] = [];
  let seen = new Set<string>();
  let snapshots = 0;
  for (;;) {
    const stop = existsSync(arg);
    const lines = readTrace(dir, RUN, CHAIN);
    snapshots += 1;
    const keys = lines.map(lineKey);
    const now = new Set(keys);
    if (now.size !== keys.length) problems.push(`snapshot ${snapshots}: a key twice`);
    for (let i = 1; i < lines.length; i++) if (lines[i].seq < lines[i - 1].seq) problems.push(`snapshot ${snapshots}: seq ${lines[i].seq} after ${lines[i - 1].seq}`);
    for (const k of seen) if (!now.has(k)) problems.push(`snapshot ${snapshots}: line ${k} lost`);
    seen = now;
    if (stop || problems.length > 20) break;
  }
  console.log(JSON.stringify({ snapshots, lines: seen.size, problems: problems.slice(0, 20) }));
}
