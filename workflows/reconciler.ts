// A write whose outcome is unknown, with `unknownOutcomes: "ask"`: the run
// parks until a person answers through the `reconcile` update (it happened,
// and what; or try it again), its approval timeout passes, or a Stop comes.
// ./reconciliation.ts checks and holds the answers.
import * as wf from '@temporalio/workflow';
import { reconcileUpdate } from '../common/run-messages.js';
import { STOPPING } from './stop.js';
import { ReconcileDesk, type AwaitingReconciliation, type ReconcileAnswer } from './reconciliation.js';
import type { RunContext } from './run-context.js';
import { otherSignatureProblem } from './signatures.js';
import { updateRefused } from './update-refusal.js';

export class Reconciler {
  private readonly desk = new ReconcileDesk();

  constructor(private readonly ctx: RunContext) {}

  register(): void {
    wf.setHandler(
      reconcileUpdate,
      async (input) => {
        this.desk.receive(input);
        // Answer once the loop has taken it, so the caller sees its effect.
        await wf.condition(() => !this.desk.hasAnswer());
        return this.ctx.board.view();
      },
      {
        validator: (input) => {
          const problem =
            (this.ctx.stop.stopped ? STOPPING : null) ?? this.desk.problem(input) ?? otherSignatureProblem(this.ctx.cfg, 'reconcile', input, typeof input?.callId === 'string' ? input.callId : '');
          if (problem) throw updateRefused(problem);
        },
      },
    );
  }

  /**
   * Parks the run on the call until a person answers; null when the approval
   * timeout passed first or a Stop came: the model is then told the outcome
   * is unknown.
   */
  async awaitAnswer(req: AwaitingReconciliation): Promise<ReconcileAnswer | null> {
    const { ctx } = this;
    this.desk.awaiting = req;
    ctx.board.park({ type: 'reconciliation', ...req });
    ctx.trace.emit('reconciliation_required', { toolName: req.toolName, callId: req.callId, known: req.known });
    const ready = () => this.desk.hasAnswer() || ctx.stop.stopped;
    if (ctx.cfg.approvalTimeoutMs === null) await wf.condition(ready);
    else await wf.condition(ready, ctx.cfg.approvalTimeoutMs);
    // Taken even when a Stop came with it, so its update can answer; the Stop wins.
    const taken = this.desk.take();
    const answer = ctx.stop.stopped ? null : taken;
    ctx.trace.emit('reconciliation_decided', { callId: req.callId, outcome: answer?.outcome ?? (ctx.stop.stopped ? 'stopped' : 'timed_out'), by: answer?.by ?? null });
    if (!ctx.stop.stopped) ctx.board.unpark();
    return answer;
  }
}
