// How far a model's own prompt count can run past ours. A hard budget holds
// each call's prompt as counted by node/tokens.ts (o200k_base over the
// OpenAI-shaped messages and tool definitions); a model with another
// tokenizer bills its own count, so the hold is short by whatever that count
// exceeds ours. This measures it, per prompt, over prompts built the way the
// harness sends them (the built-in tools' definitions, the scripted
// scenarios' transcripts over the seeded workspace) and over adversarial tool
// results (code, JSON, minified JS, base64, hex, one letter ×10,000, CJK,
// Russian, Arabic, emoji, whitespace-heavy logs).
//
// Two kinds of foreign count:
//   - content: the same strings and the same framing constants as
//     countPromptTokens, each string counted by the foreign tokenizer. This
//     isolates the tokenizer; a chat template's own tokens are not in it.
//   - billed (SmolLM2 only): llama-server's own count of the prompt it would
//     run — the Qwen2.5 chat template applied to the request, tokenized by the
//     model's vocabulary — which is what it reports as prompt_tokens (checked
//     below against real completions). The difference from its content count
//     is the template's fixed per-request overhead.
//
// The foreign tokenizers are the project's devDependencies (each carries its
// vocabulary, so the bench runs offline); TOKENIZER_DIR points at another
// node_modules to measure other versions of them.
// SmolLM2 needs llama-server and the GGUF that scripts/install-local-model.mjs
// provisions; the bench uses them only when both are already there (it never
// builds), and says so when they are not.
//
//   npx tsx bench/tokenizer-margin.ts [--out reports/tokenizer-margin.md] [--no-local]
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { toolSpecOf } from '../activities/tools/define-tool.js';
import { SEED_FILES } from '../activities/tools/workspace.js';
import { SUMMARY_INSTRUCTION } from '../common/context-window.js';
import type { ChatMessage } from '../common/contract.js';
import { DEFAULT_MAX_TOOL_RESULT_CHARS } from '../common/defaults.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { toolDefinitions, type OpenAiToolDefinition } from '../common/tool-spec.js';
import { countPromptTokens, countPromptTokensAsync, type WireMessage } from '../node/tokens.js';
import { startLocalModel, type LocalModel } from '../dev/model/local-model.js';

const args = process.argv.slice(2);
const outPath = args.includes('--out') ? args[args.indexOf('--out') + 1] : join(PROJECT_ROOT, 'reports', 'tokenizer-margin.md');
const useLocal = !args.includes('--no-local');
const TOKENIZER_DIR = process.env.TOKENIZER_DIR ?? join(PROJECT_ROOT, 'node_modules');

// ---------------------------------------------------------------- tokenizers

interface Tokenizer {
  name: string;
  /** Which models bill with it. */
  models: string;
  count(text: string): number | Promise<number>;
}

async function load(pkg: string, sub = ''): Promise<Record<string, unknown>> {
  const req = createRequire(join(TOKENIZER_DIR, 'noop.js'));
  const file = req.resolve(sub ? `${pkg}/${sub}` : pkg);
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  return mod;
}

type Encode = (text: string, ...rest: unknown[]) => number[];

async function tokenizers(): Promise<{ list: Tokenizer[]; missing: string[] }> {
  const list: Tokenizer[] = [];
  const missing: string[] = [];
  const tryAdd = async (label: string, make: () => Promise<Tokenizer>) => {
    try {
      list.push(await make());
    } catch (err) {
      missing.push(`${label}: ${String(err).split('\n')[0]}`);
    }
  };
  await tryAdd('js-tiktoken cl100k_base', async () => {
    const { Tiktoken } = (await load('js-tiktoken', 'lite')) as { Tiktoken: new (r: unknown) => { encode: Encode } };
    const ranks = ((await load('js-tiktoken', 'ranks/cl100k_base')) as { default: unknown }).default;
    const enc = new Tiktoken(ranks);
    return { name: 'cl100k_base', models: 'GPT-4, GPT-3.5-turbo, text-embedding-3', count: (t) => enc.encode(t).length };
  });
  await tryAdd('js-tiktoken p50k_base', async () => {
    const { Tiktoken } = (await load('js-tiktoken', 'lite')) as { Tiktoken: new (r: unknown) => { encode: Encode } };
    const ranks = ((await load('js-tiktoken', 'ranks/p50k_base')) as { default: unknown }).default;
    const enc = new Tiktoken(ranks);
    return { name: 'p50k_base', models: 'Codex, text-davinci-002/003 (GPT-3 era)', count: (t) => enc.encode(t).length };
  });
  await tryAdd('@anthropic-ai/tokenizer', async () => {
    const m = (await load('@anthropic-ai/tokenizer')) as { countTokens?: (t: string) => number; default?: { countTokens: (t: string) => number } };
    const count = m.countTokens ?? m.default!.countTokens;
    return { name: 'claude-legacy', models: 'Claude 1/2 (Anthropic: Claude 3+ tokenizes differently)', count: (t) => count(t) };
  });
  await tryAdd('llama3-tokenizer-js', async () => {
    const tok = ((await load('llama3-tokenizer-js')) as { default: { encode: Encode } }).default;
    return { name: 'llama3', models: 'Llama 3 / 3.1 / 3.2 / 3.3 (128k tiktoken-style BPE)', count: (t) => tok.encode(t, { bos: false, eos: false }).length };
  });
  await tryAdd('mistral-tokenizer-js', async () => {
    const tok = ((await load('mistral-tokenizer-js')) as { default: { encode: Encode } }).default;
    return { name: 'mistral-v1', models: 'Mistral 7B v0.1, Mixtral (32k SentencePiece)', count: (t) => tok.encode(t, false, false).length };
  });
  await tryAdd('llama-tokenizer-js', async () => {
    const tok = ((await load('llama-tokenizer-js')) as { default: { encode: Encode } }).default;
    return { name: 'llama2', models: 'Llama 1 / 2, Vicuna, TinyLlama (32k SentencePiece)', count: (t) => tok.encode(t, false, false).length };
  });
  return { list, missing };
}

// The same framing as node/tokens.ts promptSteps: only the counter differs.
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
async function framedCount(count: (t: string) => number | Promise<number>, messages: WireMessage[], tools: unknown[] | undefined): Promise<number> {
  const c = async (t: string) => (t ? await count(t) : 0);
  let n = REPLY_PRIMING;
  for (const m of messages) {
    n += PER_MESSAGE + (await c(m.role)) + (await c(m.content ?? ''));
    if (m.name) n += (await c(m.name)) + 1;
    if (m.tool_call_id) n += await c(m.tool_call_id);
    if (m.tool_calls?.length) n += await c(JSON.stringify(m.tool_calls));
  }
  if (tools?.length) n += await c(JSON.stringify(tools));
  return n;
}

// ---------------------------------------------------------------- the local model (SmolLM2 behind llama-server)

function localFiles(): { model: string; server: string; template: string } | null {
  const model = process.env.LOCAL_MODEL_PATH ?? join(PROJECT_ROOT, '.models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
  const cache = join(process.env.LLAMA_CACHE_DIR || join(homedir(), '.cache', 'agent-harness'), 'llama-server-11434.0.0-avx2');
  const server = process.env.LLAMA_SERVER ?? join(cache, 'llama-server');
  const template = join(cache, 'chat-template.jinja');
  return existsSync(model) && existsSync(server) && existsSync(template) ? { model, server, template } : null;
}

async function post<T>(url: string, body: unknown): Promise<T> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

/**
 * SmolLM2 through llama-server. The server has been seen to go away mid-run
 * on a busy shared machine (something else stopping llama-servers), so a call
 * whose connection drops starts a new one and is asked again (at most 20 times).
 */
function localTokenizer(start: () => Promise<LocalModel>, first: LocalModel) {
  let lm = first;
  let restarts = 0;
  const call = async <T>(path: (lm: LocalModel) => string, body: unknown): Promise<T> => {
    for (;;) {
      try {
        return await post<T>(path(lm), body);
      } catch (err) {
        if (restarts >= 20 || !/fetch failed/.test(String(err))) throw err;
        restarts++;
        process.stderr.write(`[llama-server went away: restart ${restarts}]`);
        await lm.stop().catch(() => {});
        lm = await start();
      }
    }
  };
  const root = (l: LocalModel) => l.url.replace(/\/v1$/, '');
  const tokenize = async (content: string, special: boolean) =>
    (await call<{ tokens: number[] }>((l) => `${root(l)}/tokenize`, { content, add_special: special, parse_special: special })).tokens.length;
  return {
    tok: { name: 'smollm2', models: 'SmolLM2 (49k GPT-2-style BPE) via llama-server; content only', count: (t: string) => tokenize(t, false) } satisfies Tokenizer,
    /** The prompt the server runs: its chat template over the request, tokenized as it tokenizes it. */
    async billed(messages: WireMessage[], tools: unknown[] | undefined): Promise<number> {
      const { prompt } = await call<{ prompt: string }>((l) => `${root(l)}/apply-template`, { messages, ...(tools?.length ? { tools } : {}) });
      return tokenize(prompt, true);
    },
    /** What a real completion reports as prompt_tokens (max_tokens 1). */
    async reported(messages: WireMessage[], tools: unknown[] | undefined): Promise<number> {
      const r = await call<{ usage: { prompt_tokens: number } }>((l) => `${l.url}/chat/completions`, { model: lm.model, messages, ...(tools?.length ? { tools } : {}), max_tokens: 1, temperature: 0 });
      return r.usage.prompt_tokens;
    },
    stop: () => lm.stop(),
    restarts: () => restarts,
  };
}

// ---------------------------------------------------------------- the corpus

interface Prompt {
  id: string;
  /** The content kind that dominates it (worst kinds are reported by this). */
  kind: string;
  messages: ChatMessage[];
  tools: OpenAiToolDefinition[] | undefined;
}

const TOOLS = toolDefinitions(BUILTIN_TOOLS.map(toolSpecOf));
const TASK = 'Which file mentions a timeout?';
const SYSTEM = 'You are a careful assistant working in a sandboxed workspace. Use the tools to inspect files before answering; never delete a file unless the user asked for it. Answer briefly and name the files you relied on.';

const callMsg = (id: string, name: string, a: Record<string, unknown>, content: string | null = null): ChatMessage => ({
  role: 'assistant',
  content,
  tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(a) } }],
});
const resultMsg = (id: string, name: string, content: string): ChatMessage => ({ role: 'tool', tool_call_id: id, name, content });
const listing = Object.entries(SEED_FILES)
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([n, t]) => `${n} (${Buffer.byteLength(t)} bytes)`)
  .join('\n');

/** The scripted scenarios' transcripts, turn by turn, as the harness sends them. */
function scenarioPrompts(): Prompt[] {
  const out: Prompt[] = [];
  const user: ChatMessage = { role: 'user', content: TASK };
  const t1 = [user, callMsg('c1', 'list_files', {}), resultMsg('c1', 'list_files', listing)];
  const t2 = [...t1, callMsg('c2', 'read_file', { path: 'errors.log' }), resultMsg('c2', 'read_file', SEED_FILES['errors.log'])];
  out.push({ id: 'plan turn 1 (task only)', kind: 'scenario', messages: [user], tools: TOOLS });
  out.push({ id: 'plan turn 2 (list_files result)', kind: 'scenario', messages: t1, tools: TOOLS });
  out.push({ id: 'plan turn 3 (errors.log)', kind: 'scenario', messages: t2, tools: TOOLS });
  out.push({ id: 'plan turn 3, with a system prompt', kind: 'scenario', messages: [{ role: 'system', content: SYSTEM }, ...t2], tools: TOOLS });
  out.push({ id: 'plan turn 3, no tools offered', kind: 'scenario', messages: t2, tools: undefined });
  // `parallel`: three calls in one reply.
  const par: ChatMessage = {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'list_files', arguments: '{}' } },
      { id: 'c2', type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: 'errors.log' }) } },
      { id: 'c3', type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: 'notes.txt' }) } },
    ],
  };
  out.push({
    id: 'parallel: three results',
    kind: 'scenario',
    messages: [user, par, resultMsg('c1', 'list_files', listing), resultMsg('c2', 'read_file', SEED_FILES['errors.log']), resultMsg('c3', 'read_file', SEED_FILES['notes.txt'])],
    tools: TOOLS,
  });
  // `narrated`: ten turns of text beside a call.
  const narrated: ChatMessage[] = [user];
  for (let turn = 0; turn < 10; turn++) {
    narrated.push(callMsg(`c${turn}`, 'list_files', {}, `Turn ${turn + 1}: I will list the files again to see whether anything changed since the last look.`));
    narrated.push(resultMsg(`c${turn}`, 'list_files', listing));
  }
  out.push({ id: 'narrated: 10 turns', kind: 'scenario', messages: narrated, tools: TOOLS });
  // A context-window summary request (common/context-window.ts): no tools.
  const folded = t2.map((m) => `${m.role}: ${m.content ?? JSON.stringify((m as { tool_calls?: unknown }).tool_calls)}`).join('\n');
  out.push({
    id: 'summary request',
    kind: 'scenario',
    messages: [{ role: 'system', content: SUMMARY_INSTRUCTION }, { role: 'user', content: `The run's task: ${TASK}\n\nThe turns to summarize:\n${folded}` }],
    tools: undefined,
  });
  return out;
}

/** A deterministic generator, so two runs measure the same texts. */
function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

function repeatTo(unit: string, chars: number): string {
  let s = '';
  while (s.length < chars) s += unit;
  return s.slice(0, chars);
}

function source(files: string[]): string {
  return files.map((f) => readFileSync(join(PROJECT_ROOT, f), 'utf8')).join('\n');
}

function minified(): string {
  for (const f of ['node_modules/protobufjs/dist/protobuf.min.js', 'node_modules/rxjs/dist/bundles/rxjs.umd.min.js', 'node_modules/esquery/dist/esquery.min.js']) {
    const p = join(PROJECT_ROOT, f);
    if (existsSync(p)) return readFileSync(p, 'utf8');
  }
  // No minified bundle installed: a crude one from the repo's own code.
  return source(['node/byte-pair.ts', 'common/budget-math.ts']).replace(/\/\/.*$/gm, '').replace(/\s+/g, ' ');
}

function prettyJson(): string {
  const r = rng(7);
  const rows = Array.from({ length: 400 }, (_, i) => ({
    id: `job-${1000 + i}`,
    status: ['queued', 'running', 'done', 'failed'][Math.floor(r() * 4)],
    attempts: Math.floor(r() * 5),
    startedAt: new Date(Date.UTC(2026, 8, 6, 8, 0, Math.floor(r() * 3600))).toISOString(),
    durationMs: Math.round(r() * 30000),
    worker: { host: `worker-${Math.floor(r() * 12)}.internal`, pid: 1000 + Math.floor(r() * 60000) },
    tags: ['batch', r() < 0.5 ? 'retry' : 'first', `shard-${Math.floor(r() * 8)}`],
  }));
  return JSON.stringify({ jobs: rows }, null, 2);
}

function whitespaceLog(): string {
  const r = rng(11);
  const lines: string[] = [];
  for (let i = 0; i < 600; i++) {
    const lvl = ['INFO ', 'WARN ', 'ERROR', 'DEBUG'][Math.floor(r() * 4)];
    const pad = ' '.repeat(2 + Math.floor(r() * 24));
    lines.push(`2026-09-06T08:${String(10 + (i % 50)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z  ${lvl}${pad}worker ${String(Math.floor(r() * 12)).padStart(3)}\t\t| batch ${String(i).padStart(6)} |${' '.repeat(Math.floor(r() * 12))}${Math.round(r() * 30000)} ms`);
    if (r() < 0.2) lines.push(`        at fetchBatch (/srv/app/worker.js:${Math.floor(r() * 900)}:${Math.floor(r() * 80)})\n            at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n\n\n`);
  }
  return lines.join('\n');
}

// Natural-language samples (an incident note, the kind of text a read_file or research result carries).
const NON_ENGLISH: Record<string, string> = {
  chinese:
    '昨晚八点十五分,七号工作节点在获取第118批数据时超时(30000毫秒)。调度器随后将该批次重新排队,并由二号节点在一分钟内完成处理。我们认为超时的原因是数据库连接池已满:当时有十二个节点同时运行,而连接池只允许十个连接。建议把连接池的上限提高到二十,并在心跳变慢时提前发出警告。请在周五之前检查日志轮换的配置,旧日志已经占用了大部分磁盘空间。\n',
  japanese:
    '昨夜8時15分、ワーカー7がバッチ118の取得中に30000ミリ秒でタイムアウトしました。スケジューラはそのバッチを再びキューに入れ、ワーカー2が1分以内に処理を完了しました。原因はデータベースの接続プールが満杯だったことだと考えています。当時は12台のワーカーが同時に動いていましたが、接続プールは10接続までしか許可していませんでした。上限を20に引き上げ、ハートビートが遅くなったら早めに警告を出すことを提案します。金曜日までにログのローテーション設定を確認してください。\n',
  russian:
    'Вчера в 8:15 рабочий узел 7 превысил время ожидания (30000 мс) при получении пакета 118. Планировщик вернул пакет в очередь, и узел 2 обработал его меньше чем за минуту. Мы считаем, что причина в переполненном пуле соединений с базой данных: одновременно работали двенадцать узлов, а пул допускал только десять соединений. Предлагаем поднять предел до двадцати и заранее предупреждать о медленном сердцебиении. Проверьте, пожалуйста, настройки ротации журналов до пятницы.\n',
  arabic:
    'في الساعة الثامنة والربع من مساء أمس، تجاوزت العقدة السابعة المهلة المحددة (30000 ملي ثانية) أثناء جلب الدفعة رقم 118. أعاد المجدول الدفعة إلى قائمة الانتظار، وأنهت العقدة الثانية معالجتها في أقل من دقيقة. نعتقد أن السبب هو امتلاء مجمع الاتصالات بقاعدة البيانات: كانت اثنتا عشرة عقدة تعمل في الوقت نفسه، بينما لا يسمح المجمع إلا بعشرة اتصالات. نقترح رفع الحد إلى عشرين والتحذير مبكرًا عند تباطؤ نبضات القلب. يرجى مراجعة إعدادات تدوير السجلات قبل يوم الجمعة.\n',
};

const EMOJI = '🚀 deploy ok ✅ 🔥 hot path 🐛 bug #118 👀 review 🎉🎉 ❤️ thanks 👍🏽 😅 retry ⏱️ 30s 🧵 thread 📦 pkg 🇯🇵 🇧🇷 👨‍👩‍👧‍👦 family 🏳️‍🌈 ';

function prose(chars: number): string {
  const words = 'the of and to in is that it for was on are as with they at be this from have or by one had not but what all were when we there can an your which their said if do will each about how up out them then she many some so these would other into has more two like see time could no make than first been its who now people made over did down only way find use may water long little very after words called just where most know'.split(' ');
  const r = rng(42);
  let s = '';
  while (s.length < chars) {
    const n = 6 + Math.floor(r() * 14);
    const sentence = Array.from({ length: n }, () => words[Math.floor(r() * words.length)]).join(' ');
    s += sentence[0].toUpperCase() + sentence.slice(1) + (r() < 0.15 ? '.\n\n' : '. ');
  }
  return s.slice(0, chars);
}

/** Tool results a workspace may hand back: each read through read_file into the plan transcript. */
function adversarialContents(): { kind: string; file: string; text: string }[] {
  // Deterministic bytes, so two runs compare.
  const rb = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 2654435761) >>> 24 ^ (i & 0xff)));
  const b64 = rb(24000).toString('base64');
  const hex = rb(16000).toString('hex');
  return [
    { kind: 'english prose', file: 'README.txt', text: prose(24000) },
    { kind: 'source code (TypeScript)', file: 'budget-math.ts', text: source(['common/budget-math.ts', 'node/tokens.ts']) },
    { kind: 'JSON, pretty', file: 'jobs.json', text: prettyJson() },
    { kind: 'JSON, compact', file: 'jobs.min.json', text: JSON.stringify(JSON.parse(prettyJson())) },
    { kind: 'minified JS', file: 'bundle.min.js', text: minified() },
    { kind: 'base64', file: 'blob.b64', text: b64 },
    { kind: 'hex', file: 'blob.hex', text: hex },
    { kind: "'a' x 10000", file: 'a.txt', text: 'a'.repeat(10000) },
    { kind: 'digits', file: 'digits.txt', text: Array.from({ length: 3000 }, (_, i) => String((i * 7919) % 100000).padStart(5, '0')).join('') },
    ...Object.entries(NON_ENGLISH).map(([lang, t]) => ({ kind: lang, file: `${lang}.txt`, text: repeatTo(t, 12000) })),
    { kind: 'emoji', file: 'chat.txt', text: repeatTo(EMOJI, 8000) },
    { kind: 'whitespace-heavy log', file: 'worker.log', text: whitespaceLog() },
  ];
}

function adversarialPrompts(): Prompt[] {
  const out: Prompt[] = [];
  const user: ChatMessage = { role: 'user', content: TASK };
  for (const c of adversarialContents()) {
    // Three sizes: a short excerpt, a mid-size file, and the whole text up to the most a tool result may be (maxToolResultChars, 32,000).
    for (const size of new Set([1000, 8000, Math.min(DEFAULT_MAX_TOOL_RESULT_CHARS, c.text.length)])) {
      const text = c.text.slice(0, size);
      out.push({
        id: `${c.kind} @${text.length}`,
        kind: c.kind,
        messages: [user, callMsg('c1', 'list_files', {}), resultMsg('c1', 'list_files', `${listing}\n${c.file} (${Buffer.byteLength(text)} bytes)`), callMsg('c2', 'read_file', { path: c.file }), resultMsg('c2', 'read_file', text)],
        tools: TOOLS,
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------- statistics and the report

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};
const f2 = (x: number) => x.toFixed(3);

interface Row {
  prompt: Prompt;
  ours: number;
  counts: Record<string, number>;
  billed?: number;
}

async function main() {
  const { list, missing } = await tokenizers();
  const prompts = [...scenarioPrompts(), ...adversarialPrompts()];

  let lt: ReturnType<typeof localTokenizer> | null = null;
  let localNote = '';
  const files = useLocal ? localFiles() : null;
  if (files) {
    const start = () => startLocalModel({ port: 18000 + Math.floor(Math.random() * 2000), files, contextTokens: 8192, maxReplyTokens: 1, logFile: process.env.LLAMA_LOG ?? join(tmpdir(), 'tokenizer-margin-llama.log') });
    lt = localTokenizer(start, await start());
    list.push(lt.tok);
  } else {
    localNote = useLocal ? 'SmolLM2 skipped: llama-server or the GGUF is not provisioned (node scripts/install-local-model.mjs).' : 'SmolLM2 skipped (--no-local).';
  }

  const rows: Row[] = [];
  try {
    for (const p of prompts) {
      const wire = p.messages as WireMessage[];
      const ours = await countPromptTokensAsync(wire, p.tools);
      const check = await framedCount(() => 0, [], undefined); // REPLY_PRIMING only
      if (check !== 3) throw new Error('framing drifted');
      const counts: Record<string, number> = {};
      for (const t of list) counts[t.name] = await framedCount(t.count, wire, p.tools);
      const row: Row = { prompt: p, ours, counts };
      if (lt) row.billed = await lt.billed(wire, p.tools);
      rows.push(row);
      process.stderr.write('.');
    }
    process.stderr.write('\n');

    // The framing mirror must agree with node/tokens.ts when the counter is o200k itself.
    const { Tiktoken } = (await import('js-tiktoken/lite')) as typeof import('js-tiktoken/lite');
    const o200k = new Tiktoken((await import('js-tiktoken/ranks/o200k_base')).default);
    for (const r of rows.slice(0, 8)) {
      const mirrored = await framedCount((t) => o200k.encode(t).length, r.prompt.messages as WireMessage[], r.prompt.tools);
      if (mirrored !== r.ours || mirrored !== countPromptTokens(r.prompt.messages as WireMessage[], r.prompt.tools)) throw new Error(`framing mirror ${mirrored} != ours ${r.ours} on ${r.prompt.id}`);
    }

    // llama-server's prompt_tokens against our reading of its count, on the small prompts (its prompt processing is slow on 2 cores).
    const verified: { id: string; billed: number; reported: number }[] = [];
    if (lt) {
      for (const r of rows.filter((x) => x.billed! <= 1500).slice(0, 6)) {
        verified.push({ id: r.prompt.id, billed: r.billed!, reported: await lt.reported(r.prompt.messages as WireMessage[], r.prompt.tools) });
      }
    }

    // The reading of the numbers (the recommendation) is written by hand below a marker; a new run keeps it.
    const MARK = '<!-- hand-written below: kept by new runs -->';
    const old = existsSync(outPath) ? readFileSync(outPath, 'utf8') : '';
    const kept = old.includes(MARK) ? old.slice(old.indexOf(MARK)) : `${MARK}\n`;
    writeFileSync(outPath, `${report(rows, list, missing, localNote, verified, lt?.restarts() ?? 0)}\n${kept}`);
    console.log(`wrote ${outPath}`);
    console.log(summaryTable(rows, list));
  } finally {
    await lt?.stop();
  }
}

function stats(rows: Row[], value: (r: Row) => number) {
  const ratios = rows.map((r) => value(r) / r.ours);
  const worst = rows.reduce((a, b) => (value(b) / b.ours > value(a) / a.ours ? b : a));
  return { min: Math.min(...ratios), median: quantile(ratios, 0.5), p95: quantile(ratios, 0.95), max: Math.max(...ratios), worst };
}

function summaryTable(rows: Row[], list: Tokenizer[]): string {
  const lines = ['| tokenizer | models | min | median | p95 | max | worst content kind (prompt) |', '| --- | --- | ---: | ---: | ---: | ---: | --- |'];
  for (const t of list) {
    const s = stats(rows, (r) => r.counts[t.name]);
    lines.push(`| ${t.name} | ${t.models} | ${f2(s.min)} | ${f2(s.median)} | ${f2(s.p95)} | ${f2(s.max)} | ${s.worst.prompt.kind} (${s.worst.prompt.id}: ${s.worst.counts[t.name]} vs ${s.worst.ours}) |`);
  }
  if (rows[0]?.billed !== undefined) {
    const s = stats(rows, (r) => r.billed!);
    lines.push(`| smollm2 billed | SmolLM2 via llama-server, Qwen2.5 template (what it reports as prompt_tokens) | ${f2(s.min)} | ${f2(s.median)} | ${f2(s.p95)} | ${f2(s.max)} | ${s.worst.prompt.kind} (${s.worst.prompt.id}: ${s.worst.billed} vs ${s.worst.ours}) |`);
  }
  return lines.join('\n');
}

function report(rows: Row[], list: Tokenizer[], missing: string[], localNote: string, verified: { id: string; billed: number; reported: number }[], restarts: number): string {
  const kinds = [...new Set(rows.map((r) => r.prompt.kind))];
  const names = [...list.map((t) => t.name), ...(rows[0]?.billed !== undefined ? ['smollm2 billed'] : [])];
  const val = (r: Row, n: string) => (n === 'smollm2 billed' ? r.billed! : r.counts[n]);
  const byKind = ['| content kind | prompts | o200k (ours, largest) | ' + names.join(' | ') + ' |', '| --- | ---: | ---: | ' + names.map(() => '---:').join(' | ') + ' |'];
  for (const k of kinds) {
    const rs = rows.filter((r) => r.prompt.kind === k);
    byKind.push(`| ${k} | ${rs.length} | ${Math.max(...rs.map((r) => r.ours))} | ${names.map((n) => f2(Math.max(...rs.map((r) => val(r, n) / r.ours)))).join(' | ')} |`);
  }
  const overhead = rows.filter((r) => r.billed !== undefined).map((r) => ({ r, extra: r.billed! - r.counts['smollm2'] }));
  const ovLines = overhead.length
    ? [
        '',
        '### SmolLM2: the chat template\'s own tokens (billed − content count, same tokenizer)',
        '',
        '| prompt | messages | tools | ours | smollm2 content | smollm2 billed | template overhead |',
        '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
        ...overhead.filter((o) => o.r.prompt.kind === 'scenario' || o.r.prompt.id.endsWith('@1000')).map((o) => `| ${o.r.prompt.id} | ${o.r.prompt.messages.length} | ${o.r.prompt.tools?.length ?? 0} | ${o.r.ours} | ${o.r.counts['smollm2']} | ${o.r.billed} | ${o.extra} |`),
        '',
        `Template overhead over all ${overhead.length} prompts: min ${Math.min(...overhead.map((o) => o.extra))}, max ${Math.max(...overhead.map((o) => o.extra))} tokens.`,
      ]
    : [];
  const verLines = verified.length
    ? ['', '### llama-server prompt_tokens vs the count above', '', '| prompt | apply-template + tokenize | prompt_tokens of a real completion |', '| --- | ---: | ---: |', ...verified.map((v) => `| ${v.id} | ${v.billed} | ${v.reported} |`)]
    : [];
  return [
    '# Tokenizer margin: foreign prompt counts ÷ our o200k_base count',
    '',
    'Generated by `npx tsx bench/tokenizer-margin.ts` (the tokenizers are devDependencies; `TOKENIZER_DIR` points at another node_modules).',
    `${rows.length} prompts: ${rows.filter((r) => r.prompt.kind === 'scenario').length} scripted-scenario transcripts with the ${TOOLS.length} built-in tools, and ${rows.filter((r) => r.prompt.kind !== 'scenario').length} with an adversarial read_file result (1,000 / 8,000 / 32,000 characters).`,
    'Ratio = the tokenizer\'s count ÷ `countPromptTokensAsync` (o200k_base) over the same prompt. "Content" rows count the same strings with the same framing constants; "smollm2 billed" is llama-server\'s own prompt count (template included).',
    '',
    '## Per tokenizer',
    '',
    summaryTable(rows, list),
    '',
    '## Worst ratio per content kind',
    '',
    ...byKind,
    ...ovLines,
    ...verLines,
    ...(restarts ? ['', `(llama-server was restarted ${restarts} times during the run: something on the machine stopped it; every count was asked again.)`] : []),
    '',
    ...(missing.length || localNote ? ['## Not measured', '', ...missing.map((m) => `- ${m}`), ...(localNote ? [`- ${localNote}`] : []), ''] : []),
  ].join('\n');
}

await main();
