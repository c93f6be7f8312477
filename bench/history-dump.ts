// Dump one run's history event by event (type, attrs summary): for the turn account.
import { Connection, Client } from '@temporalio/client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import proto from '@temporalio/proto';
import { AGENT_LOOP_DYNAMIC_CONFIG, findFreePort, startDevServer } from '../worker/dev-server/dev-server.js';
import { dataConverter } from '../node/payload-codec.js';
import { startWorkerProcess } from '../test/helpers/spawn-worker.js';
import { startProvider } from '../dev/provider/server.js';
import { approveSignal } from '../common/run-messages.js';
import { approveByQuery } from '../client/batch-decisions.js';

const T = proto.temporal.api.enums.v1.EventType;
const name = (t: number | null | undefined) => (T[t ?? 0] ?? String(t)).replace('EVENT_TYPE_', '');
const dir = mkdtempSync(join(tmpdir(), 'agent-hist-'));
const server = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile: null, logFile: join(dir, 'server.log'), dynamicConfig: AGENT_LOOP_DYNAMIC_CONFIG });
const provider = await startProvider();
const client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: dataConverter() });
const worker = await startWorkerProcess({ address: server.address, taskQueue: 'h', traceDir: join(dir, 't'), workspaceRoot: join(dir, 'ws'), llmBaseUrl: provider.url });
try {
  for (const model of (process.env.MODELS ?? 'destructive,plan').split(',')) {
    const id = `h-${model}`;
    const h = await client.workflow.start('agentRun', { taskQueue: 'h', workflowId: id, args: [{ task: 'Clean up the workspace.', model, workspace: 'w' }] });
    if (model === 'destructive') {
      for (;;) {
        const d = await h.describe();
        if (d.searchAttributes?.AgentStatus?.[0] === 'awaiting_approval') break;
        await new Promise((r) => setTimeout(r, 200));
      }
      if (process.env.BY_SIGNAL) await h.signal(approveSignal, { callId: 'c2', by: 'x' });
      else {
        for (;;) {
          const o = await approveByQuery(client, { query: `WorkflowId = "${id}"`, by: 'x' });
          if (o.approved) break;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    }
    await h.result().catch((e: unknown) => console.log('result error', e));
    const hist = await h.fetchHistory();
    console.log(`=== ${model}: ${hist.events?.length} events`);
    let prev = 0;
    for (const e of hist.events ?? []) {
      const t = Number(e.eventTime?.seconds ?? 0) * 1000 + Number(e.eventTime?.nanos ?? 0) / 1e6;
      const dt = prev ? (t - prev).toFixed(1) : '0';
      prev = t;
      const a = e.activityTaskScheduledEventAttributes?.activityType?.name ?? e.markerRecordedEventAttributes?.markerName ?? e.workflowExecutionSignaledEventAttributes?.signalName ?? Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}).join(',') ?? '';
      const memo = (e.workflowPropertiesModifiedEventAttributes ? 'memo' : '') + (e.workflowExecutionUpdateAcceptedEventAttributes ? 'update ' + e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name : '') + (e.workflowExecutionUpdateCompletedEventAttributes ? 'bytes ' + JSON.stringify(e.workflowExecutionUpdateCompletedEventAttributes.outcome ?? {}).length : '');
      console.log(`${e.eventId} +${dt}ms ${name(e.eventType)} ${a} ${memo}`);
    }
  }
} finally {
  await worker.kill(); await client.connection.close(); await provider.close(); await server.stop();
}
