// The messages docs/troubleshooting.md documents, as patterns: a test that
// asserts a failure's line also checks that the manual shows that line, so
// the manual cannot drift from what the harness prints.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../node/project-root.js';

export const TROUBLESHOOTING = join(PROJECT_ROOT, 'docs', 'troubleshooting.md');

/** Every line of every ```text block of the manual. */
export function documentedLines(): string[] {
  const doc = readFileSync(TROUBLESHOOTING, 'utf8');
  return [...doc.matchAll(/```text\n([\s\S]*?)\n```/g)].flatMap((m) => m[1].split('\n'));
}

/** Whether `line` (as printed) is one the manual shows, `<...>` standing for anything. */
export function isDocumented(line: string): boolean {
  return documentedLines().some((doc) => {
    const pattern = doc
      .split(/<[A-Z]+>/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.+');
    return new RegExp(`^${pattern}$`).test(line.trimEnd());
  });
}
