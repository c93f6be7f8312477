// The CLI table in docs/operations.md names every command the CLI knows, and
// no command it does not (issue 34, 5c: `follow` and `keygen` were missing).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../client/commands.js';
import { PROJECT_ROOT } from '../../node/project-root.js';

/** The first word of every `code` span in the first cell of each row of the table under "## The `agent-harness` CLI". */
function tableCommands(): string[] {
  const doc = readFileSync(join(PROJECT_ROOT, 'docs', 'operations.md'), 'utf8');
  const section = doc.split('## The `agent-harness` CLI')[1]?.split('\n## ')[0] ?? '';
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  const names = rows.flatMap((row) => {
    const first = row.split(/(?<!\\)\|/)[1] ?? '';
    return [...first.matchAll(/`([a-z-]+)[^`]*`/g)].map((m) => m[1]);
  });
  return [...new Set(names)].sort();
}

describe('docs/operations.md, the CLI table', () => {
  it('lists every command of the CLI, and only those', () => {
    expect(tableCommands()).toEqual(Object.keys(COMMANDS).sort());
  });
});
