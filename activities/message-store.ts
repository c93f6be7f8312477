// The message store: prompt messages and tool lists filed by content address
// (common/message-refs.ts), so a model call's input in history holds
// addresses and only the new messages. Every worker that may take a run's
// model call should reach the same folder (with workers on several hosts, put
// it on shared storage, like the ledger); a worker that does not find an
// address answers MessageStoreMiss and the workflow sends everything inline.
// Nothing here is the truth: deleting the folder at any time loses nothing.
// The worker's retention (activities/message-retention.ts) removes files not
// used for a while: filing or reading a text touches its file (at most every
// TOUCH_EVERY_MS), so a run that is working keeps its messages.
// Each namespace files under a folder of its own (namespaceFolder), so the
// retention of another namespace sharing the folder never sweeps its
// messages. Prompts are private: files are created 0600, folders 0700.
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { chainNode, isRef, MESSAGE_STORE_MISS, type WireMessage } from '../common/message-refs.js';
import type { OpenAiToolDefinition } from '../common/tool-spec.js';
import type { ChatMessage } from '../common/contract.js';

const addressOf = (json: string): string => createHash('sha256').update(json).digest('base64url');
const ADDRESS = /^[A-Za-z0-9_-]{43}$/;
const MEMORY_CHARS = 16 * 1024 * 1024;
/** How often a text used from memory has its file's time refreshed (retention goes by it). */
export const TOUCH_EVERY_MS = 10 * 60_000;

/** A prompt's whole list of message addresses, and the chain nodes it was read from. */
export interface PromptList {
  refs: string[];
  nodes: string[];
}

const isChainNode = (v: unknown): v is { prev: string | null; refs: string[] } =>
  typeof v === 'object' && v !== null && !Array.isArray(v) &&
  ((v as { prev?: unknown }).prev === null || typeof (v as { prev?: unknown }).prev === 'string') &&
  Array.isArray((v as { refs?: unknown }).refs) && (v as { refs: unknown[] }).refs.every((r) => typeof r === 'string');

/** How many addresses the resolved prompt lists held in memory may hold in all (pointers to shared strings). */
const MEMORY_LIST_SLOTS = 1_000_000;

/** The folder of a namespace's messages inside the store: its name when plain, else a hash (`=` marks it: no plain name has one). */
export function namespaceFolder(root: string, namespace: string): string {
  const plain = /^[A-Za-z0-9._-]{1,100}$/.test(namespace) && namespace !== '.' && namespace !== '..';
  return join(root, 'namespaces', plain ? namespace : `=${createHash('sha256').update(namespace).digest('hex').slice(0, 32)}`);
}

const PRIVATE_FILE = 0o600;
const PRIVATE_DIR = 0o700;

export class MessageStore {
  /** Addresses this process wrote or read recently: no file system call for them again. */
  private readonly known = new Map<string, string>();
  private knownChars = 0;
  /** Prompt lists resolved or filed recently, by their address: the next turn's chain ends in one of them. */
  private readonly lists = new Map<string, PromptList>();
  private listSlots = 0;
  /** When each known text's file was last written or touched. */
  private readonly touched = new Map<string, number>();

  /** Where this store's files are: the namespace's folder in `root` (`root` itself without a namespace: older code's layout). */
  readonly dir: string;

  constructor(root: string, namespace?: string) {
    this.dir = namespace === undefined ? root : namespaceFolder(root, namespace);
  }

  private path(ref: string): string {
    return join(this.dir, ref.slice(0, 2), `${ref}.json`);
  }

  /** Files a JSON text under its address (once: the same text always has the same address). */
  async put(json: string): Promise<string> {
    const ref = addressOf(json);
    if (this.known.has(ref)) {
      this.touch(ref);
      return ref;
    }
    const file = this.path(ref);
    await mkdir(join(this.dir, ref.slice(0, 2)), { recursive: true, mode: PRIVATE_DIR });
    // Written aside and renamed: a reader never sees half a file.
    const tmp = `${file}.${randomUUID()}.tmp`;
    await writeFile(tmp, json, { mode: PRIVATE_FILE });
    await rename(tmp, file);
    this.remember(ref, json);
    this.touched.set(ref, Date.now());
    return ref;
  }

  /**
   * Files a JSON text without waiting: its address now, the write in the
   * background. `written` never fails: a text the store could not take only
   * costs a later prompt carrying it whole.
   */
  file(json: string): { ref: string; written: Promise<void> } {
    const ref = addressOf(json);
    if (this.known.has(ref)) {
      this.touch(ref);
      return { ref, written: Promise.resolve() };
    }
    return { ref, written: this.put(json).then(() => undefined, () => undefined) };
  }

  /** The JSON text filed under `ref`, or null when it is missing or does not match its address. */
  async get(ref: string): Promise<string | null> {
    const hit = this.known.get(ref);
    if (hit !== undefined) {
      this.touch(ref);
      return hit;
    }
    if (!ADDRESS.test(ref)) return null;
    let json: string;
    try {
      json = await readFile(this.path(ref), 'utf8');
    } catch {
      return null;
    }
    if (addressOf(json) !== ref) return null;
    this.remember(ref, json);
    this.touched.delete(ref);
    this.touch(ref);
    return json;
  }

  /**
   * The whole list of message addresses filed under `ref`: its chain node
   * followed back to its start, each node's addresses after its
   * predecessor's. Null when any part is missing or is not a chain node. Every node of a list in use is touched, so retention keeps
   * a working run's chain whole.
   */
  async promptList(ref: string): Promise<PromptList | null> {
    const walked: { ref: string; refs: string[] }[] = [];
    let base: PromptList = { refs: [], nodes: [] };
    for (let cur: string | null = ref; cur !== null; ) {
      const cached = this.lists.get(cur);
      if (cached) {
        base = cached;
        break;
      }
      const json = await this.get(cur);
      if (json === null) return null;
      const v = JSON.parse(json) as unknown;
      if (!isChainNode(v)) return null;
      walked.push({ ref: cur, refs: v.refs });
      cur = v.prev;
    }
    let list = base;
    for (const node of walked.reverse()) list = { refs: list.refs.concat(node.refs), nodes: [...list.nodes, node.ref] };
    for (const node of list.nodes) this.touch(node);
    if (walked.length > 0) this.rememberList(ref, list);
    return list;
  }

  /** Keeps a resolved list for the next turn's walk (oldest out first). */
  rememberList(ref: string, list: PromptList): void {
    if (this.lists.has(ref)) return;
    this.lists.set(ref, list);
    this.listSlots += list.refs.length + list.nodes.length;
    for (const [old, l] of this.lists) {
      if (this.listSlots <= MEMORY_LIST_SLOTS || old === ref) break;
      this.lists.delete(old);
      this.listSlots -= l.refs.length + l.nodes.length;
    }
  }

  /** Refreshes the file's time (retention keeps what is used); a file that is gone is simply filed again next time. */
  private touch(ref: string): void {
    const now = Date.now();
    if (now - (this.touched.get(ref) ?? 0) < TOUCH_EVERY_MS) return;
    this.touched.set(ref, now);
    const at = new Date(now);
    utimes(this.path(ref), at, at).catch(() => this.forget(ref));
  }

  /** A file removed under us (retention): the next put writes it again. */
  private forget(ref: string): void {
    const text = this.known.get(ref);
    if (text === undefined) return;
    this.known.delete(ref);
    this.touched.delete(ref);
    this.knownChars -= text.length;
  }

  // A bounded memory of recent texts (oldest out first): the next turn's
  // prompt repeats most of this one's.
  private remember(ref: string, json: string): void {
    this.known.set(ref, json);
    this.knownChars += json.length;
    for (const [old, text] of this.known) {
      if (this.knownChars <= MEMORY_CHARS) break;
      this.known.delete(old);
      this.touched.delete(old);
      this.knownChars -= text.length;
    }
  }
}

/**
 * The whole prompt of a model call: the last prompt's messages (`prefix`, the
 * address of its list of message addresses), then each message read from the
 * store by address or filed in it when inline; this prompt's own list is filed
 * too, for the next turn. A missing address is a non-retryable
 * MessageStoreMiss: another attempt on this worker would miss again; the
 * workflow resends everything inline.
 */
export async function resolvePrompt(
  store: MessageStore,
  input: { prefix?: { ref: string; count: number }; messages: readonly WireMessage[]; tools?: OpenAiToolDefinition[]; toolsRef?: string },
): Promise<{ messages: ChatMessage[]; tools: OpenAiToolDefinition[]; filed: Promise<void> }> {
  const missing: string[] = [];
  let head: WireMessage[] = [];
  let prefix: PromptList = { refs: [], nodes: [] };
  if (input.prefix) {
    const list = await store.promptList(input.prefix.ref);
    if (list !== null && list.refs.length === input.prefix.count) {
      prefix = list;
      head = list.refs.map((ref) => ({ ref }));
    } else missing.push(input.prefix.ref);
  }
  const refs: string[] = [];
  const writes: Promise<void>[] = [];
  const file = (json: string): string => {
    const { ref, written } = store.file(json);
    writes.push(written);
    return ref;
  };
  const messages = await Promise.all(
    [...head, ...input.messages].map(async (m, i) => {
      if (!isRef(m)) {
        refs[i] = file(JSON.stringify(m));
        return m;
      }
      refs[i] = m.ref;
      const json = await store.get(m.ref);
      if (json === null) missing.push(m.ref);
      return json === null ? null : (JSON.parse(json) as ChatMessage);
    }),
  );
  let tools = input.tools;
  if (tools) file(JSON.stringify(tools));
  else if (input.toolsRef) {
    const json = await store.get(input.toolsRef);
    if (json === null) missing.push(input.toolsRef);
    else tools = JSON.parse(json) as OpenAiToolDefinition[];
  }
  if (missing.length) {
    throw ApplicationFailure.create({
      type: MESSAGE_STORE_MISS,
      message: `the message store at ${store.dir} does not hold ${missing.length} of this prompt's parts (first: ${missing[0]}); the run will send them inline`,
      nonRetryable: true,
      details: [{ missing }],
    });
  }
  // Only what is new since the prefix: the workflow builds the same node and so knows its address.
  const node = file(chainNode(input.prefix?.ref ?? null, refs.slice(head.length)));
  store.rememberList(node, { refs, nodes: [...prefix.nodes, node] });
  // The writes go on while the model answers; the caller awaits them before it returns.
  return { messages: messages as ChatMessage[], tools: tools ?? [], filed: Promise.all(writes).then(() => undefined) };
}
