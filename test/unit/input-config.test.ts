// The configuration a run records (resolveConfig writes it into history): for
// a valid input it must not change when the validation code does, or new runs
// would record something else than runs of the same input before. Pinned here
// as literal configurations and, over generated valid inputs, as the rules
// that produce them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseInput, type PriceOf } from '../../common/input.js';
import { BUILT_IN_DEFAULTS } from '../../common/defaults.js';
import { BUILTIN_SPECS } from '../helpers/builtin-specs.js';
import type { RunConfig } from '../../common/contract.js';
import { propertyParams } from '../helpers/property.js';

const priceOf: PriceOf = (model) => ({ sentModel: model, pricing: { inputPerMTokUsd: 0.5, outputPerMTokUsd: 1.5 } });
const parse = (raw: unknown, d = BUILT_IN_DEFAULTS) => parseInput(raw, d, BUILTIN_SPECS, priceOf);
/** The configuration as history stores it, with each tool spec by name (the specs are pinned in builtin-specs.test.ts). */
const recorded = (cfg: RunConfig) => JSON.stringify({ ...cfg, toolSpecs: (cfg.toolSpecs ?? []).map((s) => s.name) });

const BASE_KEYS = ['task', 'model', 'system', 'maxTurns', 'maxBudgetUsd', 'toolErrors', 'dedupe', 'tools', 'toolSpecs', 'workspace', 'pricing', 'approvalTimeoutMs', 'modelTimeoutMs', 'toolTimeoutMs', 'maxToolResultChars', 'continueAsNewAtHistoryBytes', 'permanentToolErrors', 'experimentalEmptyRejection', 'debug', 'context', 'resumeFrom'];

describe('the configuration a valid input resolves to', () => {
  it('a bare task: every default, in the recorded order', () => {
    expect(recorded(parse({ task: 't' }))).toBe(
      '{"task":"t","model":"plan","system":null,"maxTurns":15,"maxBudgetUsd":1,"toolErrors":"describe","dedupe":"readOnly","tools":["list_files","read_file","delete_file","scan_archive"],"toolSpecs":["list_files","read_file","delete_file","scan_archive"],"workspace":"default","pricing":{"inputPerMTokUsd":0.5,"outputPerMTokUsd":1.5},"approvalTimeoutMs":null,"modelTimeoutMs":120000,"toolTimeoutMs":60000,"maxToolResultChars":32000,"continueAsNewAtHistoryBytes":4194304,"permanentToolErrors":"stop","experimentalEmptyRejection":false,"debug":false,"context":null,"resumeFrom":null}',
    );
  });

  it('every field given: the optional parts appear where they always did', () => {
    const input = {
      task: 'Tidy up.', model: 'm', system: 'be brief', limits: { maxTurns: null, maxBudgetUsd: 0.5, budgetMode: 'hard', minReplyTokens: 100 }, toolErrors: 'fatal', dedupe: 'all',
      tools: ['read_file', 'list_files', 'read_file'], workspace: 'w.1', pricing: { inputPerMTokUsd: 0 }, approvalTimeoutMs: null, budgetTimeoutMs: 5000, modelTimeoutMs: 1, toolTimeoutMs: 2.5,
      maxToolResultChars: 400000, continueAsNewAtHistoryBytes: 1024, debug: true, context: { windowTokens: 1000, keepRecentTurns: 0 },
      resumeFrom: null, unknownOutcomes: 'ask', forkFrom: { run: 'src', atTurn: 3, message: 'again' },
    };
    expect(recorded(parse(input, { ...BUILT_IN_DEFAULTS, requireArgsHash: ['delete_file'] }))).toBe(
      '{"task":"Tidy up.","model":"m","system":"be brief","maxTurns":null,"maxBudgetUsd":0.5,"toolErrors":"fatal","dedupe":"all","unknownOutcomes":"ask","tools":["read_file","list_files"],"toolSpecs":["read_file","list_files"],"workspace":"w.1","pricing":{"inputPerMTokUsd":0,"outputPerMTokUsd":1.5},"approvalTimeoutMs":null,"modelTimeoutMs":1,"toolTimeoutMs":2.5,"maxToolResultChars":400000,"continueAsNewAtHistoryBytes":1024,"permanentToolErrors":"stop","experimentalEmptyRejection":false,"debug":true,"context":{"windowTokens":1000,"strategy":"elide","keepRecentTurns":0},"resumeFrom":null,"forkFrom":{"run":"src","workflowId":"src","runId":null,"atTurn":3,"message":"again","inheritedCostUsd":null,"fromFile":false},"requireArgsHash":["delete_file"],"hardBudget":{"minReplyTokens":100,"maxReplyTokens":4096,"budgetTimeoutMs":5000}}',
    );
  });
});

const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
// Integers past 2^53 too: the old checks took any integer, and so must the schema.
const posInt = fc.oneof(fc.integer({ min: 1, max: 400_000 }), fc.constantFrom(1e20, 2 ** 53 + 2));
const pos = fc.oneof(posInt, fc.double({ min: Number.MIN_VALUE, max: 1e300, noNaN: true }));
const nonNeg = fc.oneof(fc.constantFrom(0, -0), pos);
const TOOLS = ['list_files', 'read_file', 'delete_file', 'scan_archive', 'research'];
const validInput = fc.record(
  {
    task: fc.string({ minLength: 1 }).filter((t) => t.trim() !== ''),
    model: maybe(fc.constantFrom('plan', 'x y')),
    system: maybe(fc.constantFrom('sys', '', null)),
    limits: maybe(
      fc.record(
        { maxTurns: maybe(fc.option(posInt)), maxBudgetUsd: maybe(pos), budgetMode: maybe(fc.constantFrom('soft', 'hard')), minReplyTokens: maybe(fc.integer({ min: 1, max: 4096 })) },
        { requiredKeys: [] },
      ).map(({ minReplyTokens, ...limits }) => (limits.budgetMode === 'hard' ? { ...limits, minReplyTokens } : limits)),
    ),
    toolErrors: maybe(fc.constantFrom('describe', 'generic', 'fatal')),
    dedupe: maybe(fc.constantFrom('readOnly', 'off', 'all')),
    tools: maybe(fc.array(fc.constantFrom(...TOOLS), { maxLength: 6 })),
    workspace: maybe(fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/)),
    pricing: maybe(fc.record({ inputPerMTokUsd: maybe(nonNeg), outputPerMTokUsd: maybe(nonNeg) }, { requiredKeys: [] })),
    approvalTimeoutMs: maybe(fc.option(pos)),
    modelTimeoutMs: maybe(pos),
    toolTimeoutMs: maybe(pos),
    maxToolResultChars: maybe(fc.integer({ min: 1, max: 400_000 })),
    continueAsNewAtHistoryBytes: maybe(fc.integer({ min: 1, max: 40 * 1024 * 1024 })),
    debug: maybe(fc.boolean()),
    context: maybe(fc.option(fc.record({ windowTokens: fc.integer({ min: 1000, max: 10_000_000 }), strategy: maybe(fc.constant('elide')), keepRecentTurns: maybe(fc.integer({ min: 0, max: 1000 })) }, { requiredKeys: ['windowTokens'] }))),
    resumeFrom: maybe(fc.constantFrom('r1', null)),
    unknownOutcomes: maybe(fc.constantFrom('ask', 'tell_model')),
  },
  { requiredKeys: ['task'] },
);

describe('over generated valid inputs', () => {
  it('each given value is recorded as given, each absent one as its default, and the keys come in the recorded order', () => {
    fc.assert(
      fc.property(validInput, (input) => {
        const cfg = parse(input);
        const d = BUILT_IN_DEFAULTS;
        const hard = input.limits?.budgetMode === 'hard';
        const extra = [...(input.unknownOutcomes === 'ask' ? ['unknownOutcomes'] : []), ...(hard ? ['hardBudget'] : [])];
        expect(Object.keys(cfg)).toEqual(input.unknownOutcomes === 'ask' ? [...BASE_KEYS.slice(0, 7), 'unknownOutcomes', ...BASE_KEYS.slice(7), ...extra.slice(1)] : [...BASE_KEYS, ...extra]);
        expect(cfg).toMatchObject({
          task: input.task,
          model: input.model ?? d.model,
          system: input.system ?? null,
          maxTurns: input.limits?.maxTurns === undefined ? d.maxTurns : input.limits.maxTurns,
          maxBudgetUsd: input.limits?.maxBudgetUsd ?? d.maxBudgetUsd,
          toolErrors: input.toolErrors ?? d.toolErrors,
          dedupe: input.dedupe ?? d.dedupe,
          tools: input.tools ? [...new Set(input.tools)] : d.tools,
          workspace: input.workspace ?? d.workspace,
          approvalTimeoutMs: input.approvalTimeoutMs === undefined ? d.approvalTimeoutMs : input.approvalTimeoutMs,
          modelTimeoutMs: input.modelTimeoutMs ?? d.modelTimeoutMs,
          toolTimeoutMs: input.toolTimeoutMs ?? d.toolTimeoutMs,
          maxToolResultChars: input.maxToolResultChars ?? d.maxToolResultChars,
          continueAsNewAtHistoryBytes: input.continueAsNewAtHistoryBytes ?? d.continueAsNewAtHistoryBytes,
          // Experiment settings are not the input's: always these (test/helpers/experiments.ts sets others on the harness's workers).
          permanentToolErrors: 'stop',
          experimentalEmptyRejection: false,
          debug: input.debug ?? false,
          context: input.context ? { windowTokens: input.context.windowTokens, strategy: 'elide', keepRecentTurns: input.context.keepRecentTurns ?? 2 } : null,
          resumeFrom: input.resumeFrom ?? null,
        });
        expect((cfg.toolSpecs ?? []).map((s) => s.name)).toEqual(cfg.tools);
        // Any run takes the input's prices, and the worker's for the model for what the input leaves out (issue 37: soft budgets too).
        const fallback = input.pricing?.inputPerMTokUsd === undefined || input.pricing?.outputPerMTokUsd === undefined ? { inputPerMTokUsd: 0.5, outputPerMTokUsd: 1.5 } : d.pricing;
        expect(cfg.pricing).toEqual({ inputPerMTokUsd: input.pricing?.inputPerMTokUsd ?? fallback.inputPerMTokUsd, outputPerMTokUsd: input.pricing?.outputPerMTokUsd ?? fallback.outputPerMTokUsd });
        if (hard) expect(cfg.hardBudget).toEqual({ minReplyTokens: (input.limits && 'minReplyTokens' in input.limits ? input.limits.minReplyTokens : undefined) ?? 256, maxReplyTokens: 4096, budgetTimeoutMs: null });
      }),
      propertyParams(500),
    );
  });
});

describe('experiment settings are not a run\'s input', () => {
  it.each([
    ['permanentToolErrors', 'retry'],
    ['experimentalEmptyRejection', true],
  ])('%s in a run\'s input is refused, naming it: no input turns the chapter\'s failure modes on in production', (field, value) => {
    expect(() => parse({ task: 't', [field]: value })).toThrow(new RegExp(`${field} is not a known field`));
  });
});
