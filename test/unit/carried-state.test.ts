// The state a run carries across continue-as-new is read in one place, at the
// start of the next execution (workflows/carried-state.ts): this version is
// checked, 0.1's unversioned shape upgraded, an unknown version refused by
// name. test/attacks/carried-state.test.ts drives the same through a worker.
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { parseBuiltin } from '../helpers/builtin-specs.js';
import { undecodableMarker } from '../../common/undecodable.js';
import { CARRIED_STATE_ERROR, CARRIED_STATE_VERSION, upgradeCarried, type CarriedState } from '../../workflows/carried-state.js';
import { initialState } from '../../workflows/run-state.js';

const cfg = parseBuiltin({ task: 't', model: 'plan' });
const current = (): CarriedState => ({
  version: CARRIED_STATE_VERSION,
  cfg,
  state: { ...initialState(cfg), turns: 2, messagesAtLastCall: 3 },
  decisions: {},
  seq: 7,
  executions: 1,
  chainId: 'chain-1',
  steers: [],
  stream: { state: { log: [], base_offset: 0, publisher_sequences: {} } as unknown as CarriedState['stream']['state'], boundaries: [0] },
  usedSteerSignatures: {},
});

/** What 0.1 wrote: no version; the steering queue, the signatures, the raises, the estimate count and the over-reservation absent when empty. */
function as01(): Record<string, unknown> {
  const { version: _v, steers: _s, usedSteerSignatures: _u, ...rest } = current();
  const { budgetRaises: _b, usageOverReservation: _o, usageEstimatedTurns: _e, ...state } = rest.state;
  return { ...rest, state };
}

function failure(raw: unknown): ApplicationFailure {
  try {
    upgradeCarried(raw);
  } catch (err) {
    if (err instanceof ApplicationFailure) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

describe('upgradeCarried', () => {
  it('takes a state of this version as it is', () => {
    expect(upgradeCarried(current())).toEqual(current());
  });

  it('upgrades 0.1’s unversioned shape (and the 1 and 2 it once wrote): every field present, with its empty value', () => {
    for (const version of [undefined, 1, 2]) {
      const up = upgradeCarried({ ...as01(), ...(version !== undefined ? { version } : {}) });
      expect(up).toEqual(current());
      expect(up.state).toMatchObject({ usageEstimatedTurns: 0, budgetRaises: [], usageOverReservation: null });
    }
    // What 0.1 carried when it had them is kept.
    const raise = { fromUsd: 0.05, toUsd: 0.5, by: 'alice', reason: null };
    const kept = upgradeCarried({ ...as01(), steers: [{ message: 'm', by: null, interrupt: false, at: 'x', task: 0 }], state: { ...current().state, budgetRaises: [raise], usageEstimatedTurns: 2 } });
    expect(kept.steers).toHaveLength(1);
    expect(kept.state).toMatchObject({ budgetRaises: [raise], usageEstimatedTurns: 2 });
  });

  it('refuses an unknown version, non-retryable, naming it and the versions it reads', () => {
    for (const [version, shown] of [
      [4, '4'],
      ['next', 'next'],
      [{ major: 1 }, '{"major":1}'],
    ] as const) {
      const err = failure({ ...current(), version });
      expect(err).toMatchObject({ type: CARRIED_STATE_ERROR, nonRetryable: true });
      expect(err.message).toContain(`its carried state has version ${shown}, which this worker does not know (it reads version ${CARRIED_STATE_VERSION} and upgrades 0.1)`);
    }
  });

  it('refuses a state missing a field the loop reads, or holding a bad one, naming the field', () => {
    const { cfg: _c, ...noCfg } = current();
    expect(failure(noCfg)).toMatchObject({ type: CARRIED_STATE_ERROR, message: 'cannot continue this run: its carried state (version 3) has no cfg', details: [{ field: 'cfg' }] });
    const { callsProposed: _p, ...state } = current().state;
    expect(failure({ ...current(), state }).message).toMatch(/has no state\.callsProposed$/);
    // 0.1 states from before its own shape (no run chain) are not guessed at.
    const { chainId: _ch, ...noChain } = as01();
    expect(failure(noChain).message).toMatch(/has no chainId$/);
    expect(failure({ ...current(), seq: 'seven' }).message).toMatch(/has an invalid seq$/);
    expect(failure({ ...current(), state: { ...current().state, costUsd: -1 } }).message).toMatch(/has an invalid state\.costUsd$/);
  });

  it('refuses what is not a state at all, or a payload the worker could not decode', () => {
    expect(failure(null).message).toBe('cannot continue this run: the carried state is null, not an object');
    expect(failure([1]).message).toMatch(/is an array, not an object$/);
    expect(failure(undecodableMarker('no key k2')).message).toBe('cannot continue this run: the continue-as-new input could not be decoded: no key k2');
  });
});
