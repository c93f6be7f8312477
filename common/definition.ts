// What defines a run, and its fingerprint: the system prompt, the tool specs,
// the model, its prices and the limits. A resume or a fork carries a run across
// code and configuration changes (a new tool spec, another default prompt, new
// prices); comparing the fingerprints says whether the definition moved, and
// the fields say what. Pure and deterministic (@noble/hashes, canonical JSON):
// the workflow computes it from the configuration recorded in history, so a
// replay computes the same and no history needs a marker for it.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { canonicalJson } from './args-hash.js';
import type { AgentInput, DefinitionChangePolicy, RunConfig } from './contract.js';

/**
 * A continuation whose definition moved under it (a field its own input did
 * not set) is refused by default: a run silently carried onto another system
 * prompt or tool set is how runs get lost across upgrades, and saying
 * `acknowledgeDefinitionChange: true` once costs the operator one flag.
 */
export const DEFAULT_DEFINITION_CHANGE: DefinitionChangePolicy = 'refuse';
export { DEFINITION_CHANGE_POLICIES } from './settings.js';

/** The fields of a definition, by the names definitionChanged reports. */
export const DEFINITION_FIELDS = ['system', 'tools', 'model', 'prices', 'limits', 'outputSchema', 'modelSettings'] as const;
/** One field of a run's definition: what `definitionChanged` lists. */
export type DefinitionField = (typeof DEFINITION_FIELDS)[number];
export type Definition = Record<Exclude<DefinitionField, 'outputSchema' | 'modelSettings'>, unknown> & Partial<Record<'outputSchema' | 'modelSettings', unknown>>;


/** Drops undefined members, which canonical JSON would otherwise write as null (absent and unset are the same here). */
const defined = <T extends object>(o: T): Partial<T> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

export function definitionOf(cfg: RunConfig): Definition {
  return {
    system: cfg.system,
    // A sub-agent tool's spec (its child's system prompt, model, tools and limits) defines the run as much as its description does.
    tools: cfg.toolSpecs.map((s) => defined({ name: s.name, description: s.description, parameters: s.parameters, readOnly: s.readOnly, needsApproval: s.needsApproval, subAgent: s.subAgent })),
    model: cfg.model,
    prices: cfg.pricing,
    limits: defined({ maxTurns: cfg.maxTurns, maxBudgetUsd: cfg.maxBudgetUsd, hardBudget: cfg.hardBudget }),
    // Only when set: the hash of a run without them is the one it had before they existed.
    ...(cfg.outputSchema !== undefined ? { outputSchema: { schema: cfg.outputSchema, maxOutputRetries: cfg.maxOutputRetries } } : {}),
    ...(cfg.modelSettings !== undefined ? { modelSettings: cfg.modelSettings } : {}),
  };
}

/** A field's hash; an absent field (outputSchema, modelSettings not set) hashes as null, whichever worker recorded the source. */
const fieldHash = (d: Definition, f: DefinitionField): string => hex(d[f] ?? null);

const hex = (v: unknown) => bytesToHex(sha256(utf8ToBytes(canonicalJson(v))));

/** SHA-256 (hex) of the definition as canonical JSON (keys sorted at every depth, no spaces). */
export function definitionHash(cfg: RunConfig): string {
  return hex(definitionOf(cfg));
}

/** What a continuation records of its source: the source's hash, and each field's, to name what differs. */
export interface DefinitionSource {
  hash: string;
  fields: Record<DefinitionField, string>;
}

export function definitionSource(cfg: RunConfig): DefinitionSource {
  const d = definitionOf(cfg);
  return { hash: hex(d), fields: Object.fromEntries(DEFINITION_FIELDS.map((f) => [f, fieldHash(d, f)])) as Record<DefinitionField, string> };
}

/** The fields of `cfg`'s definition that differ from the source's, in DEFINITION_FIELDS order. */
export function definitionChanges(source: DefinitionSource, cfg: RunConfig): DefinitionField[] {
  const d = definitionOf(cfg);
  // A source recorded before a field existed has no hash for it: it had none of it (null).
  return DEFINITION_FIELDS.filter((f) => (source.fields[f] ?? hex(null)) !== fieldHash(d, f));
}

/**
 * The changed fields the continuation's own input did not ask for: a resume
 * given a higher turn cap changed the limits on purpose; a tool spec that
 * moved with a deploy, or a worker's other default prompt, moved under it.
 */
export function unaskedChanges(changed: readonly DefinitionField[], input: AgentInput): DefinitionField[] {
  const asked: Record<DefinitionField, boolean> = {
    system: input.system !== undefined,
    tools: input.tools !== undefined,
    model: input.model !== undefined,
    prices: input.pricing !== undefined,
    limits: input.limits !== undefined,
    outputSchema: input.outputSchema !== undefined || input.maxOutputRetries !== undefined,
    modelSettings: input.modelSettings !== undefined,
  };
  return changed.filter((f) => !asked[f]);
}

/** What the status query, the result and the run_started line say of the definition. */
export interface DefinitionView {
  definitionHash: string;
  sourceDefinitionHash?: string;
  definitionChanged?: DefinitionField[];
}

export function definitionView(cfg: RunConfig): DefinitionView {
  return {
    definitionHash: definitionHash(cfg),
    ...(cfg.definitionFrom ? { sourceDefinitionHash: cfg.definitionFrom.hash, definitionChanged: [...cfg.definitionFrom.changed] } : {}),
  };
}
