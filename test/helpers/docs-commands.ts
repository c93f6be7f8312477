// The commands the manual shows: every line of every ```sh or ```bash block of
// README.md and docs/*.md, continuation lines joined and comments dropped, with
// the variable assignments of its block (`T=.temporal/bin/temporal`) kept
// beside it so it can be run as written.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../node/project-root.js';

export interface DocCommand {
  /** README.md or docs/NAME.md. */
  file: string;
  /** 1-based line of the block where the command starts. */
  line: number;
  /** The command as a shell would read it: one line, no trailing comment. */
  text: string;
  /** `NAME=value` lines of the same block that come before it. */
  setup: string[];
}

export const DOC_FILES = ['README.md', ...readdirSync(join(PROJECT_ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

/** `text` without a `# comment` that starts outside quotes. */
export function stripComment(text: string): string {
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]))) {
      return text.slice(0, i).trimEnd();
    }
  }
  return text.trimEnd();
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=\S+$/;

export function commandsIn(file: string, markdown: string): DocCommand[] {
  const out: DocCommand[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash)\s*$/.test(lines[i])) continue;
    const setup: string[] = [];
    let pending = '';
    let startLine = 0;
    for (i++; i < lines.length && !lines[i].startsWith('```'); i++) {
      const raw = lines[i].trim();
      if (!pending) startLine = i + 1;
      const joined = pending ? `${pending} ${raw}` : raw;
      if (joined.endsWith('\\')) {
        pending = joined.slice(0, -1).trimEnd();
        continue;
      }
      pending = '';
      const text = stripComment(joined);
      if (text === '') continue;
      if (ASSIGNMENT.test(text)) setup.push(text);
      else out.push({ file, line: startLine, text, setup: [...setup] });
    }
  }
  return out;
}

export function documentedCommands(): DocCommand[] {
  return DOC_FILES.flatMap((f) => commandsIn(f, readFileSync(join(PROJECT_ROOT, f), 'utf8')));
}
