// Content addresses for the prompt. A message the message store already
// holds travels in a model call's input as its address ({ref}), and only what
// is new travels whole: carrying the whole transcript and tool list every
// turn would grow history with the square of the turns. The address is
// the SHA-256 of the message's JSON, computed here (deterministic, pure JS)
// and again by the activity that stores or reads it, so neither side has to
// trust the other: a message whose address does not match is a miss.
//
// The store is a cache, never the truth: the workflow's state keeps every
// message, so a missing or wiped store costs one call with everything inline
// (see MESSAGE_STORE_MISS), never a lost message.
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import type { OpenAiToolDefinition } from './tool-spec.js';
import type { MessageRef, WireMessage } from './activity-contract.js';
import type { ChatMessage } from './contract.js';

export type { MessageRef, WireMessage } from './activity-contract.js';


export const isRef = (m: WireMessage): m is MessageRef => !('role' in m);

/** The failure type the model activity throws when an address is not in its store. */
export const MESSAGE_STORE_MISS = 'MessageStoreMiss';

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** base64url without padding, as Node's digest('base64url') writes it. */
function base64url(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += B64URL[(n >> 18) & 63] + B64URL[(n >> 12) & 63];
    if (i + 1 < bytes.length) out += B64URL[(n >> 6) & 63];
    if (i + 2 < bytes.length) out += B64URL[n & 63];
  }
  return out;
}

/** The address of a JSON text: base64url SHA-256 (43 characters). */
export const addressOf = (json: string): string => base64url(sha256(utf8ToBytes(json)));

// Messages in the loop's state are replaced, never edited in place (elision
// builds a new object), so an object's address never changes.
const memo = new WeakMap<object, string>();

/** The address of a message or of a tool list, as the store files it. */
export function refOf(value: object): string {
  let ref = memo.get(value);
  if (ref === undefined) {
    ref = addressOf(JSON.stringify(value));
    memo.set(value, ref);
  }
  return ref;
}

/** The prompt as it travels: what `stored` holds by address, the rest whole. */
export function wireMessages(messages: readonly ChatMessage[], stored: ReadonlySet<string>): WireMessage[] {
  return messages.map((m) => {
    const ref = refOf(m);
    return stored.has(ref) ? { ref } : m;
  });
}

/** What the workflow knows the store holds (kept in the loop's state). */
export interface StoreKnowledge {
  /** Addresses known to be filed: the last prompt, its tool list and reply, tool results filed since. */
  storedRefs?: string[];
  /** The last prompt's message addresses, in order (the store holds this list too). */
  promptRefs?: string[];
  /** The address of the last prompt's chain node (chainNode). */
  promptChain?: string;
}

/** A model call's prompt as it travels. */
export interface PromptByAddress {
  /** The last prompt's messages, by the address of their list: this prompt starts with them. */
  prefix?: { ref: string; count: number };
  messages: WireMessage[];
  tools?: OpenAiToolDefinition[];
  toolsRef?: string;
}

/**
 * A prompt's list of message addresses as the store files it: the previous
 * prompt's node (null: none) and only the addresses after it. Filing each
 * prompt's whole list would grow the store with the square of the turns
 * (45 MB for a 1,000-turn run); a node is the size of what is new. Both
 * sides build the same text, so both know its address.
 */
export const chainNode = (prev: string | null, refs: readonly string[]): string => JSON.stringify({ prev, refs });

/**
 * The prompt by address: the last prompt as one address when it is still this
 * prompt's beginning, then each message by address when known filed, whole
 * otherwise; the tool list likewise. The last prompt's address is its chain
 * node's (chainNode), and this prompt's list is filed as a node too.
 */
export function promptByAddress(messages: readonly ChatMessage[], tools: OpenAiToolDefinition[], known: StoreKnowledge): PromptByAddress {
  const stored = new Set(known.storedRefs ?? []);
  const refs = messages.map(refOf);
  const last = known.promptRefs ?? [];
  const continues = last.length > 0 && last.length <= refs.length && last.every((r, i) => refs[i] === r);
  const prefixRef = continues ? known.promptChain : undefined;
  const toolsRef = refOf(tools);
  return {
    ...(prefixRef !== undefined ? { prefix: { ref: prefixRef, count: last.length } } : {}),
    messages: wireMessages(prefixRef !== undefined ? messages.slice(last.length) : messages, stored),
    ...(stored.has(toolsRef) ? { toolsRef } : { tools }),
  };
}

/** The prompt whole (after a store miss): its list is filed as a chain node with no previous one. */
export function wholePrompt(messages: ChatMessage[], tools: OpenAiToolDefinition[]): PromptByAddress {
  return { messages, tools };
}

/**
 * After a reply to the prompt `sent`: the store now holds the prompt (each
 * message and its list, or its chain node), the tool list and the reply.
 */
export function rememberPrompt(known: StoreKnowledge, messages: readonly ChatMessage[], tools: OpenAiToolDefinition[], reply: ChatMessage, sent: Pick<PromptByAddress, 'prefix'>): void {
  known.promptRefs = messages.map(refOf);
  known.storedRefs = [...known.promptRefs, refOf(tools), refOf(reply)];
  known.promptChain = addressOf(chainNode(sent.prefix?.ref ?? null, known.promptRefs.slice(sent.prefix?.count ?? 0)));
}

/** A tool activity filed this message (`ref`): trusted only if it is this exact message's address. */
export function noteFiled(known: StoreKnowledge, message: ChatMessage, ref: string | undefined): void {
  if (ref !== undefined && ref === refOf(message)) (known.storedRefs ??= []).push(ref);
}
