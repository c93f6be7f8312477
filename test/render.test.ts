// The follow output's lines for a person's decision: each decision in its own
// word (never "rejectd"), pure rendering, no server.
import { describe, expect, it } from 'vitest';
import { renderEvent } from '../client/render';
import type { TraceLine } from '../common/trace-format';

const line = (fields: Record<string, unknown>) => ({ ts: '2024-01-01T00:00:00.000Z', ...fields }) as unknown as TraceLine;

describe('renderEvent: approval_decided', () => {
  it('a rejection says rejected, with a cross, and its reason', () => {
    expect(renderEvent(line({ type: 'approval_decided', decision: 'reject', by: 'me', reason: 'not that file' }), 'w')).toBe('  ✘ rejected by me: not that file');
  });
  it('an approval says approved, with a tick', () => {
    expect(renderEvent(line({ type: 'approval_decided', decision: 'approve', by: 'alice' }), 'w')).toBe('  ✔ approved by alice');
  });
});
