// The tools one worker offers: built-ins, a deployment's own tool modules and
// MCP servers' tools, by name. Checked once at worker start, so a clash or a
// sub-agent naming a missing tool stops the worker with the reason instead of
// failing runs later.
import { MAX_SUB_AGENT_DEPTH } from '../../common/defaults.js';
import type { ToolSpec } from '../../common/tool-spec.js';
import { isSubAgent, toolSpecOf, type AnyToolDefinition, type ToolDefinition } from './define-tool.js';

/** The tools one worker offers, by name: a clash, or a sub-agent naming a tool not offered, throws here. */
export class Toolset {
  private readonly byName = new Map<string, AnyToolDefinition>();

  constructor(defs: readonly AnyToolDefinition[]) {
    for (const def of defs) {
      const prior = this.byName.get(def.name);
      if (prior) throw new Error(`two tools are named ${def.name} (${prior.origin ?? 'unknown origin'} and ${def.origin ?? 'unknown origin'}); rename one`);
      this.byName.set(def.name, def);
    }
    for (const def of defs) {
      if (!isSubAgent(def)) continue;
      for (const t of def.subAgent.tools) {
        if (!this.byName.has(t)) throw new Error(`sub-agent tool ${def.name} gives its child ${t}, which this worker does not offer (offered: ${this.names().join(', ')})`);
      }
    }
    for (const def of defs) if (isSubAgent(def)) this.checkNesting([def.name]);
  }

  /**
   * A chain of sub-agents (`chain`: the tool first, its descendant last) and
   * every chain below it: none may come back to a tool already in it (a cycle
   * nests until the budget runs out), nor be longer than MAX_SUB_AGENT_DEPTH
   * (each link is a child run). Checked once per worker, so a run never has
   * to count how deep it is.
   */
  private checkNesting(chain: readonly string[]): void {
    const def = this.byName.get(chain[chain.length - 1]);
    if (!def || !isSubAgent(def)) return;
    const path = (to: string) => [...chain, to].join(' → ');
    if (chain.length > MAX_SUB_AGENT_DEPTH) {
      throw new Error(`sub-agent tool ${chain[0]}: its sub-agents nest ${chain.length} levels deep (${chain.join(' → ')}), more than the ${MAX_SUB_AGENT_DEPTH} allowed (MAX_SUB_AGENT_DEPTH)`);
    }
    for (const t of def.subAgent.tools) {
      if (chain.includes(t)) throw new Error(`sub-agent tool ${chain[0]} starts itself again through its children (${path(t)}): a sub-agent may not be its own descendant`);
      this.checkNesting([...chain, t]);
    }
  }

  /** Only these names (AGENT_TOOLS, or the setting named): an unknown one is an error naming what exists. */
  only(names: readonly string[], setting = 'AGENT_TOOLS'): Toolset {
    for (const n of names) if (!this.byName.has(n)) throw new Error(`${setting} names ${n}, which no tool source offers (offered: ${this.names().join(', ')})`);
    return new Toolset([...this.byName.values()].filter((d) => names.includes(d.name)));
  }

  /** The definitions, in the order they were given. */
  definitions(): AnyToolDefinition[] {
    return [...this.byName.values()];
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** An activity tool's definition (sub-agent tools run no activity). */
  runnable(name: string): ToolDefinition | undefined {
    const def = this.byName.get(name);
    return def && !isSubAgent(def) ? def : undefined;
  }

  /** What the workflow may know: specs by name, in the order the tools were given. */
  specs(): ToolSpec[] {
    return [...this.byName.values()].map(toolSpecOf);
  }
}
