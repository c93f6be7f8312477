// An MCP tool result as the text the model reads: text parts as they are,
// other parts described in one line (the model cannot see an image in a tool
// message), and structured content when there is nothing else.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((c) => {
    switch (c.type) {
      case 'text':
        return c.text;
      case 'image':
      case 'audio':
        return `[${c.type} ${c.mimeType}, ${c.data.length} base64 characters]`;
      case 'resource_link':
        return `[resource ${c.uri}${c.description ? `: ${c.description}` : ''}]`;
      case 'resource':
        return 'text' in c.resource ? c.resource.text : `[resource ${c.resource.uri}${c.resource.mimeType ? `, ${c.resource.mimeType}` : ''}]`;
      default:
        return `[${(c as { type: string }).type} content]`;
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

/** One progress notification as a trace label. */
export function progressLabel(p: { progress: number; total?: number; message?: string }): string {
  return p.message ?? (p.total !== undefined ? `${p.progress} of ${p.total}` : `${p.progress}`);
}
