// What Node's vm charges for each call into a context with a timeout, as the
// SDK's workflow threads make every call into a run's context (the worker's
// isolateExecutionTimeout, 5 s by default): Node starts a watchdog for each
// such call. Prints µs of wall and CPU time per call with and without one,
// alternating, VM_CALLS calls each (reports/turn-account.md).
// Run: npx tsx bench/vm-watchdog.ts
import vm from 'node:vm';

const CALLS = Number(process.env.VM_CALLS ?? 20_000);
if (!Number.isInteger(CALLS) || CALLS < 1) throw new Error(`VM_CALLS must be a whole number of 1 or more, got ${JSON.stringify(process.env.VM_CALLS)}`);
const context = vm.createContext({});
const script = new vm.Script('globalThis.n = (globalThis.n ?? 0) + 1');
for (const options of [{ timeout: 5000 }, {}, { timeout: 5000 }, {}]) {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) script.runInContext(context, options);
  const used = process.cpuUsage(cpu);
  const label = 'timeout' in options ? 'with a 5 s timeout' : 'without a timeout';
  console.log(`${label}: ${(((performance.now() - wall) / CALLS) * 1000).toFixed(1)} µs wall, ${((used.user + used.system) / CALLS).toFixed(1)} µs CPU per call`);
}
