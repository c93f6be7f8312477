// The task queues of the shared dev server whose runs this test file's
// harness replays when the file ends, beyond the queues its own workers poll:
// those of the worker processes the file spawned, and those a test names
// (a CLI started with AGENT_TASK_QUEUE). Module state: vitest gives each test
// file its own module graph, so the set is the file's.
const queues = new Set<string>();

/** Every run on this queue of the shared dev server is replayed when the file ends. */
export function replayRunsOnQueue(taskQueue: string): void {
  queues.add(taskQueue);
}

export function queuesToReplay(): ReadonlySet<string> {
  return queues;
}
