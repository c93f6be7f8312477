// OpenTelemetry: a worker process and the CLI with OTEL_EXPORTER_OTLP_ENDPOINT
// set send their spans to an OTLP/HTTP collector — here a tiny one in the
// test, which keeps what the exporter POSTs to /v1/traces (JSON). One `plan`
// run (3 model calls, list_files and read_file) gives a single trace: the
// CLI's StartWorkflow, the worker's RunWorkflow under it, a StartActivity per
// activity under that and the activity's RunActivity under each, a
// ReadAhead:runTool span per read under the model call that ran it ahead,
// every span naming the run.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useHarness, waitFor } from './helpers/harness.js';
import { startWorkerProcess } from './helpers/worker-process.js';

const h = useHarness({ worker: false });
const exec = promisify(execFile);

/** A span as the collector keeps it: OTLP/JSON flattened, with its resource's service name. */
interface Span {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
  kvlistValue?: object;
  arrayValue?: object;
}
interface OtlpKeyValue {
  key: string;
  value?: OtlpValue;
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: OtlpKeyValue[] }[] }[];
  }[];
}

const plain = (v: OtlpValue | undefined): unknown => v?.stringValue ?? v?.intValue ?? v?.boolValue ?? v?.doubleValue ?? v?.kvlistValue ?? v?.arrayValue;
const attrs = (kvs: OtlpKeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, plain(kv.value)]));

const spans: Span[] = [];
const rejected: string[] = [];
let collector: Server;
let endpoint = '';

beforeAll(async () => {
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        rejected.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attrs(rs.resource?.attributes)['service.name']);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, attributes: attrs(s.attributes) });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => collector?.close(() => resolve()));
});

describe('OpenTelemetry spans', () => {
  it('the CLI, the workflow, each model call and each tool call are spans of one trace, all naming the run', { timeout: 120_000 }, async () => {
    const taskQueue = `otel-${randomUUID().slice(0, 8)}`;
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '50' };
    const worker = await startWorkerProcess({
      taskQueue,
      traceDir: h.traceDir,
      workspaceRoot: h.workspaceRoot,
      // No prebuilt bundle: the worker bundles the workflows itself, with the tracing interceptors.
      env: { ...otel, OTEL_SERVICE_NAME: 'otel-test-worker', WORKFLOW_BUNDLE_PATH: '' },
    });
    try {
      expect(worker.output()).toContain(`traces ${endpoint}/v1/traces`);
      const id = `otel-${randomUUID().slice(0, 8)}`;
      const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');
      const env = { ...process.env, ...otel, OTEL_SERVICE_NAME: 'otel-test-cli', TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: taskQueue, TRACE_DIR: h.traceDir };
      const cli = await exec(bin, ['run', '--model', 'plan', '--id', id], { env, timeout: 60_000 });
      expect(cli.stdout).toContain('answer: errors.log mentions a timeout');

      // The CLI follows the run on its live stream: each poll is an update of its own, a trace of its own (and the workflow's
      // handling of it is under that), as are its look at the closed run and the query for what it had not read. What the
      // run itself does is one trace.
      const isStreamRead = (s: Span) => s.name.includes('__temporal_workflow_stream_poll') || /(Query|Handle)[A-Za-z]*:streamItems$/.test(s.name) || s.name === 'DescribeWorkflow';
      const ofRun = () => spans.filter((s) => s.attributes.temporalWorkflowId === id && !isStreamRead(s));
      const named = (name: string) => ofRun().filter((s) => s.name === name);
      // Exported in batches: wait for the last ones (the workflow's own span ends with the run).
      await waitFor('the run\'s spans at the collector', () =>
        named('StartWorkflow:agentRun').length === 1 &&
        named('RunWorkflow:agentRun').length === 1 &&
        named('RunActivity:callModel').length === 3 &&
        named('ReadAhead:runTool').length === 2,
      );
      expect(rejected).toEqual([]);

      const [start] = named('StartWorkflow:agentRun');
      const [run] = named('RunWorkflow:agentRun');
      expect(start.service).toBe('otel-test-cli');
      expect(start.parentSpanId).toBe('');
      expect(run.service).toBe('otel-test-worker');
      expect(run.parentSpanId).toBe(start.spanId);
      // The workflow's spans carry WorkflowInfo's plain fields, not its nested ones (memo, search attributes).
      expect(run.attributes).toMatchObject({ workflowType: 'agentRun', taskQueue });
      expect(Object.entries(run.attributes).filter(([, v]) => typeof v === 'object')).toEqual([]);

      // Every span the worker made for this run is in the CLI's trace.
      for (const s of ofRun()) expect(s.traceId).toBe(start.traceId);
      // Nothing of this trace lacks the run's id.
      expect(spans.filter((s) => s.traceId === start.traceId && s.attributes.temporalWorkflowId !== id)).toEqual([]);
      // And the polls were there: the run was followed live.
      expect(spans.some((s) => s.attributes.temporalWorkflowId === id && isStreamRead(s))).toBe(true);

      // The workflow schedules each activity; the activity's own span is under its schedule.
      for (const [activity, n] of [['callModel', 3]] as const) {
        const scheduled = named(`StartActivity:${activity}`);
        const ran = named(`RunActivity:${activity}`);
        expect(scheduled).toHaveLength(n);
        expect(ran).toHaveLength(n);
        for (const s of scheduled) expect(s.parentSpanId).toBe(run.spanId);
        expect(ran.map((r) => r.parentSpanId).sort()).toEqual(scheduled.map((s) => s.spanId).sort());
        for (const r of ran) expect(r.service).toBe('otel-test-worker');
      }
      // Both tool calls (reads) ran ahead, inside the model call that asked for them: a span each under that call's.
      const reads = named('ReadAhead:runTool');
      expect(reads.map((s) => s.attributes.toolName)).toEqual(['list_files', 'read_file']);
      const modelRuns = named('RunActivity:callModel').map((s) => s.spanId);
      for (const r of reads) expect(modelRuns).toContain(r.parentSpanId);
      expect(named('StartActivity:runTool')).toEqual([]);

      // The JSONL trace is written as before.
      expect(h.trace(id).at(-1)).toMatchObject({ type: 'run_stopped', status: 'completed', turns: 3 });
    } finally {
      await worker.kill();
    }
  });
});
