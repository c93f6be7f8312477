// A provider's stream (LanguageModelV3StreamPart) folded into what doGenerate
// would have returned, so one conversion (./ai-sdk-prompt.ts replyOf) serves
// both. Pure: the caller reads the stream and hands over each part.
import type { LanguageModelV3Content, LanguageModelV3FinishReason, LanguageModelV3StreamPart, LanguageModelV3Usage } from '@ai-sdk/provider';

export interface FoldedStream {
  content: LanguageModelV3Content[];
  /** Absent when the stream ended without its `finish` part (it was cut short). */
  finishReason?: LanguageModelV3FinishReason;
  usage?: LanguageModelV3Usage;
  /** The stream's `error` parts, in order (a malformed part, say). */
  errors: unknown[];
  /** Where each stream text id's text sits in `content`. */
  textAt: Record<string, number>;
}

export function emptyFold(): FoldedStream {
  return { content: [], errors: [], textAt: {} };
}

/**
 * One part into the fold. The deltas of one text id become one text part, at
 * the place its text started; tool calls are taken whole from `tool-call`
 * parts (their input deltas are only a preview).
 */
export function foldPart(fold: FoldedStream, part: LanguageModelV3StreamPart): FoldedStream {
  switch (part.type) {
    case 'text-start':
    case 'text-delta': {
      if (!Object.hasOwn(fold.textAt, part.id)) fold.textAt[part.id] = fold.content.push({ type: 'text', text: '' }) - 1;
      const text = fold.content[fold.textAt[part.id]];
      if (part.type === 'text-delta' && text.type === 'text') text.text += part.delta;
      return fold;
    }
    case 'tool-call':
      fold.content.push(part);
      return fold;
    case 'finish':
      fold.finishReason = part.finishReason;
      fold.usage = part.usage;
      return fold;
    case 'error':
      fold.errors.push(part.error);
      return fold;
    default:
      return fold;
  }
}

export function foldParts(parts: Iterable<LanguageModelV3StreamPart>): FoldedStream {
  let fold = emptyFold();
  for (const p of parts) fold = foldPart(fold, p);
  return fold;
}
