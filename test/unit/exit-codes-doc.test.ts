// docs/troubleshooting.md's exit-code table is the CLI's: every code of
// client/exit-codes.ts, the run's five exits among them, and no other; the
// help's exit-code lines are shown as printed (issue 34, 5k).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT_CODES_HELP } from '../../client/commands.js';
import { ALREADY_FINISHED, EXIT_CODES, NO_WORKER, NOT_FOUND, RECORDED_PENDING, USAGE_ERROR } from '../../client/exit-codes.js';
import { isDocumented, TROUBLESHOOTING } from '../helpers/documented.js';

function table(): Map<number, string> {
  const section = readFileSync(TROUBLESHOOTING, 'utf8').split('### Exit codes')[1]?.split('\n### ')[0] ?? '';
  const rows = [...section.matchAll(/^\| (\d+) \| (.+) \|$/gm)];
  return new Map(rows.map((m) => [Number(m[1]), m[2]]));
}

describe('docs/troubleshooting.md, exit codes', () => {
  it('has a row for every exit code the CLI uses, and only those', () => {
    const codes = new Set([...Object.values(EXIT_CODES), USAGE_ERROR, NOT_FOUND, ALREADY_FINISHED, NO_WORKER, RECORDED_PENDING]);
    expect([...table().keys()].sort((a, b) => a - b)).toEqual([...codes].sort((a, b) => a - b));
  });

  it('names each of the run\'s exits at its code', () => {
    const rows = table();
    for (const [exit, code] of Object.entries(EXIT_CODES)) expect(rows.get(code), exit).toContain(`\`${exit}\``);
  });

  it('shows the help\'s exit-code lines as the CLI prints them', () => {
    for (const line of EXIT_CODES_HELP.split('\n')) expect(isDocumented(line), line).toBe(true);
  });
});
