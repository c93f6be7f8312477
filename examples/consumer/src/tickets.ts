// The team's tools: closures over its own data (here an in-memory store; in
// production a database pool or an HTTP client the process already holds).
import { defineTool, ToolError } from 'temporal-agent-harness/tools';

export interface Ticket {
  id: string;
  title: string;
  status: 'open' | 'closed';
  note?: string;
}

export function ticketTools(store: Map<string, Ticket>) {
  const lookup = defineTool({
    name: 'lookup_ticket',
    description: 'Read a support ticket by id.',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
    readOnly: true,
    run: async (_ctx, args) => {
      const ticket = store.get(args.id);
      if (!ticket) throw new ToolError(`no ticket ${args.id}`);
      return JSON.stringify(ticket);
    },
  });
  const close = defineTool({
    name: 'close_ticket',
    description: 'Close a support ticket with a note. Asks a person first.',
    parameters: {
      type: 'object',
      properties: { id: { type: 'string' }, note: { type: 'string' } },
      required: ['id', 'note'],
      additionalProperties: false,
    },
    // A write: claimed before it acts, recorded after, never done twice (the effect protocol).
    readOnly: false,
    needsApproval: true,
    pastTense: 'closed the ticket',
    run: async (ctx, args) => {
      const ticket = store.get(args.id);
      if (!ticket) throw new ToolError(`no ticket ${args.id}`);
      // The effect protocol: the claim is checked once more right before the write.
      await ctx.effect.confirm();
      store.set(args.id, { ...ticket, status: 'closed', note: args.note });
      return `ticket ${args.id} closed`;
    },
  });
  return [lookup, close];
}
