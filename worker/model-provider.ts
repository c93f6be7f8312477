// LLM_PROVIDER's AI SDK providers, made from LLM_BASE_URL and LLM_API_KEY, so
// the standalone worker reaches Anthropic's Messages API (or any
// OpenAI-compatible server through the AI SDK's package) with no code of the
// team's. Worker code only: the workflow bundle never imports a provider.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ModelProvider } from '../activities/ai-sdk-model.js';
import type { LlmProviderName } from '../node/env-schema.js';

/** The provider LLM_PROVIDER names; null for `builtin` (the built-in client). */
export function providerFromEnv(kind: LlmProviderName, baseUrl: string, apiKey: string | undefined): ModelProvider | null {
  switch (kind) {
    case 'builtin':
      return null;
    case 'anthropic':
      // The package sends x-api-key; without LLM_API_KEY it would read ANTHROPIC_API_KEY itself.
      return createAnthropic({ baseURL: baseUrl, ...(apiKey ? { apiKey } : {}) });
    case 'openai-compatible':
      // includeUsage: a streamed reply without usage would be priced from our own count.
      return createOpenAICompatible({ baseURL: baseUrl, name: 'openai-compatible', includeUsage: true, ...(apiKey ? { apiKey } : {}) });
  }
}
