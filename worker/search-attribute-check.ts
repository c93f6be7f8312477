// Before a worker polls, its namespace must have every search attribute the
// runs upsert (common/search-attributes.ts), with the right type: an
// upsert of an attribute the namespace lacks fails the workflow task, and
// Temporal retries it forever, so every run would hang at its first step.
// The worker creates what is missing when it may (AGENT_SEARCH_ATTRIBUTES=
// create, the default: a self-hosted server or the dev server); when it may
// not (`check`: an API key without admin rights, as usual on Temporal Cloud)
// or the server refuses, it stops at start naming what is missing and the
// commands that create it.
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTES, type SearchAttributeTypeName } from '../common/search-attributes.js';
import type { SearchAttributeMode } from '../node/config.js';
import { ENV_NAMES, type SettingNames } from './setting-names.js';

const IndexedValueType = proto.temporal.api.enums.v1.IndexedValueType;

const INDEXED_TYPE: Record<SearchAttributeTypeName, number> = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  Text: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  Datetime: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
};

/** A search attribute the namespace has with another type than the harness needs. */
export interface WrongType {
  /** The attribute. */
  name: string;
  /** The type the harness needs. */
  want: SearchAttributeTypeName;
  /** The type the namespace has, as the CLI names it (Keyword, Int, Bool, …). */
  have: string;
}

/** Thrown when the namespace cannot run the harness; its message says what to do. */
export class SearchAttributesNotReady extends Error {
  constructor(
    /** Attributes the namespace lacks, by name. */
    readonly missing: string[],
    /** Attributes it has with another type. */
    readonly wrongType: WrongType[],
    message: string,
  ) {
    super(message);
    this.name = 'SearchAttributesNotReady';
  }
}

/** What the namespace lacks and what it has with another type. */
export async function searchAttributeGaps(conn: Pick<Connection, 'operatorService'>, namespace: string): Promise<{ missing: string[]; wrongType: WrongType[] }> {
  const listed = await conn.operatorService.listSearchAttributes({ namespace });
  const have = new Map(Object.entries(listed.customAttributes ?? {}).map(([name, type]) => [name, Number(type)]));
  const missing: string[] = [];
  const wrongType: WrongType[] = [];
  for (const [name, want] of Object.entries(SEARCH_ATTRIBUTES)) {
    const type = have.get(name);
    if (type === undefined) missing.push(name);
    else if (type !== INDEXED_TYPE[want]) wrongType.push({ name, want, have: typeName(type) });
  }
  return { missing, wrongType };
}

/**
 * Resolves when the namespace has every attribute with its type (after
 * adding the missing ones in `create` mode); throws SearchAttributesNotReady
 * otherwise.
 */
export async function requireSearchAttributes(conn: Pick<Connection, 'operatorService'>, namespace: string, mode: SearchAttributeMode, names: SettingNames = ENV_NAMES): Promise<void> {
  let gaps = await searchAttributeGaps(conn, namespace);
  let refusal: string | null = null;
  if (mode === 'create' && gaps.missing.length > 0 && gaps.wrongType.length === 0) {
    try {
      await conn.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(gaps.missing.map((n) => [n, INDEXED_TYPE[SEARCH_ATTRIBUTES[n]]])),
      });
    } catch (err) {
      // Another worker added them first: the check below sees them.
      if (!/already exists/i.test(String(err))) refusal = err instanceof Error ? err.message : String(err);
    }
    gaps = await searchAttributeGaps(conn, namespace);
  }
  if (gaps.missing.length === 0 && gaps.wrongType.length === 0) return;
  throw new SearchAttributesNotReady(gaps.missing, gaps.wrongType, explain(namespace, gaps.missing, gaps.wrongType, mode, refusal, names));
}

function explain(namespace: string, missing: string[], wrongType: WrongType[], mode: SearchAttributeMode, refusal: string | null, names: SettingNames): string {
  const lines: string[] = [];
  if (missing.length > 0) {
    const why = refusal !== null ? `the server refused to create them (${refusal})` : mode === 'check' ? `${names.searchAttributesCheck}: this worker does not create them` : 'they could not be created';
    lines.push(
      `namespace ${namespace} lacks the search attributes ${missing.map((n) => `${n} (${SEARCH_ATTRIBUTES[n]})`).join(', ')} that every run sets, and ${why}. ` +
        'Without them each run\'s first workflow task fails and is retried forever. Create them, then start the worker again:',
    );
    lines.push(...createCommands(namespace, missing).map((c) => `  ${c}`));
    lines.push(`  (Temporal Cloud: ${cloudCommand(namespace, missing)}, or the namespace's page in the Cloud UI)`);
  }
  if (wrongType.length > 0) {
    lines.push(
      `namespace ${namespace} has ${wrongType.map((w) => `${w.name} as ${w.have}`).join(', ')}, but the runs set ${wrongType.map((w) => `${w.name} as ${w.want}`).join(', ')}: ` +
        'a search attribute\'s type cannot change. Remove it (`temporal operator search-attribute remove --namespace ' +
        `${namespace} --name ${wrongType.map((w) => w.name).join(' --name ')}\`; on Temporal Cloud ask support) and start the worker again.`,
    );
  }
  return lines.join('\n');
}

/** One `temporal operator search-attribute create` per type (the command takes one --type). */
export function createCommands(namespace: string, names: string[]): string[] {
  const byType = new Map<SearchAttributeTypeName, string[]>();
  for (const n of names) byType.set(SEARCH_ATTRIBUTES[n], [...(byType.get(SEARCH_ATTRIBUTES[n]) ?? []), n]);
  return [...byType].map(([type, ns]) => `temporal operator search-attribute create --namespace ${namespace} ${ns.map((n) => `--name ${n}`).join(' ')} --type ${type}`);
}

function cloudCommand(namespace: string, names: string[]): string {
  return `tcld namespace search-attributes add --namespace ${namespace} ${names.map((n) => `--sa ${n}=${SEARCH_ATTRIBUTES[n]}`).join(' ')}`;
}

function typeName(type: number): string {
  const name = IndexedValueType[type] as string | undefined;
  if (!name) return `type ${type}`;
  // INDEXED_VALUE_TYPE_KEYWORD_LIST -> KeywordList
  return name
    .replace(/^INDEXED_VALUE_TYPE_/, '')
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_, __: string, c: string) => c.toUpperCase());
}
