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

/** A ```ts block of the README or docs/: where it is, its code, and the hidden lines that give it its context. */
export interface DocTsBlock {
  file: string;
  /** The line of the opening fence (1-based). */
  line: number;
  code: string;
  /**
   * An HTML comment `<!-- typecheck ... -->` right above the fence (invisible
   * on GitHub and npm): the imports and `declare`s of what the snippet takes
   * from the reader's own project (its `db`, its activities), so the block
   * shown is compiled as shown.
   */
  prelude: string;
}

/** Every ```ts / ```typescript block of `markdown`. */
export function tsBlocksIn(file: string, markdown: string): DocTsBlock[] {
  const lines = markdown.split('\n');
  const out: DocTsBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i])) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${file}:${i + 1}: a ts block with no closing fence`);
    let prelude = '';
    if (i > 0 && /-->\s*$/.test(lines[i - 1])) {
      let start = i - 1;
      while (start > 0 && !lines[start].startsWith('<!--')) start--;
      if (/^<!-- typecheck\b/.test(lines[start])) prelude = lines.slice(start, i).join('\n').replace(/^<!-- typecheck\b/, '').replace(/-->\s*$/, '');
    }
    out.push({ file, line: i + 1, code: lines.slice(i + 1, end).join('\n'), prelude });
    i = end;
  }
  return out;
}

/** Every TypeScript block of the README and docs/. */
export function documentedTypeScript(): DocTsBlock[] {
  return DOC_FILES.flatMap((f) => tsBlocksIn(f, readFileSync(join(PROJECT_ROOT, f), 'utf8')));
}

/**
 * The files a doc's blocks make, as a team would save them: a block (or part
 * of a block) that starts with a `// name.ts: …` comment is that file of the
 * doc's folder, so an import of the workflows module in one block finds
 * the other; any other block is a file of its own (`block-<line>.ts`).
 * A prelude's `// name.ts` sections go on top of the file of that name (an
 * unnamed prelude on top of the block's first file; one for a file the
 * block does not show is that file). Paths are
 * `<doc>/<file>`: docs/plugin.md's worker.ts is the file worker.ts of the
 * folder docs-plugin.
 */
export function docFiles(blocks: DocTsBlock[]): Record<string, string> {
  const files: Record<string, string> = {};
  const split = (text: string, fallback: string): [string, string][] => {
    const parts: [string, string[]][] = [];
    for (const l of text.split('\n')) {
      const named = /^\/\/ ([\w.-]+\.ts)\b/.exec(l);
      if (named || parts.length === 0) parts.push([named ? named[1] : fallback, []]);
      parts[parts.length - 1][1].push(l);
    }
    return parts.map(([n, ls]) => [n, ls.join('\n')]);
  };
  for (const b of blocks) {
    const folder = b.file.replace(/\.md$/, '').replace(/\//g, '-');
    const own = split(b.code, `block-${b.line}.ts`);
    const pre = new Map(split(b.prelude.trim(), own[0][0]).filter(([, t]) => t.trim() !== ''));
    // A file a doc shows again (a second workflows.ts, one variant) is a project of its own, in a folder of the block's.
    const base = own.some(([n]) => `${folder}/${n}` in files) ? `${folder}/block-${b.line}` : folder;
    for (const [name, text] of own) {
      const path = `${base}/${name}`;
      if (path in files) throw new Error(`${b.file}:${b.line}: ${name} is shown twice in one block`);
      const body = `${pre.get(name) ?? ''}\n${text}\n`;
      // A snippet with no import or export would be a script, where top-level await is refused.
      files[path] = /^\s*(import|export)\b/m.test(body) ? body : `${body}export {};\n`;
    }
    // A prelude section for a file the block does not show (its db module) is that file, whole.
    for (const [name, text] of pre) {
      if (own.some(([n]) => n === name)) continue;
      const path = `${base}/${name}`;
      if (path in files) throw new Error(`${b.file}:${b.line}: ${name} is shown twice in ${b.file}`);
      files[path] = `${text}\n`;
    }
  }
  return files;
}
