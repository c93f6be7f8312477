// Lint rules that guard the sandbox and the async code. Workflow code must be
// deterministic: no Node built-ins, no activity implementations (types only).
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

// Node's built-in modules, by both names: what the workflow sandbox has not.
// workflows/ and common/ (all the workflow bundle may import) are refused them.
const sandboxPaths = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)].map((name) => ({
  name,
  message: 'Workflow code runs in a deterministic sandbox: do I/O in an activity, or put Node-only shared code in node/.',
}));

export default tseslint.config(
  { ignores: ['node_modules/**', '.temporal/**', '.data/**', 'eslint.config.mjs', 'bin/**', 'scripts/**', 'bench/peer/**', 'examples/consumer/**', 'dist/**', 'common/failure-converter.cjs'] },
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: sandboxPaths,
          patterns: [
            { group: ['../activities', '../activities/*', '../activities/**'], allowTypeImports: true, message: 'Import activities as types only: proxyActivities<typeof ...>.' },
            { group: ['../worker/**', '../client/**', '../dev/**', '../test/**'], message: 'Workflow code must not reach worker, client or dev tooling code.' },
            { group: ['../node/**', '../../node/**'], message: 'node/ is Node-only code the workflow sandbox cannot run: workflow code shares only common/.' },
          ],
        },
      ],
    },
  },
  // examples/ is what a team writes: it imports the package's public entries
  // only (workflows/index, worker/index, activities/tools/index,
  // client/index, dev/testing), never a module past them.
  {
    files: ['examples/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(?!\\.\\./)(?!(workflows/index|worker/index|activities/tools/index|client/index|dev/testing)\\.js$)',
              message: 'Examples use the package\'s public entries only (workflow, worker, tools, client, testing): what a team outside this repository can import.',
            },
          ],
        },
      ],
    },
  },
  // The layers, bottom up: common (what the workflow bundle may import:
  // workflow-safe, no Node built-ins, nothing of the project); node (shared
  // code that runs in Node only: configuration, payload codec, trace files,
  // connection errors; it may import common/ only); workflows (common/ only);
  // activities; worker (process start-up, and the embedded dev server it
  // starts when no address is set); client. That is the product. dev/ (the
  // scripted provider, the local model, `npm start`'s stack, the native
  // cluster) and the tests, benches and experiments sit on top: they may
  // import the product, never the reverse. `npm run lint` (part of `npm test`,
  // so of CI) checks it.
  {
    files: ['common/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: sandboxPaths,
        patterns: [{ group: ['../*'], message: 'common/ is the neutral bottom layer the workflow bundle imports: it imports nothing of the project (Node-only shared code goes to node/).' }],
      }],
    },
  },
  {
    files: ['node/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['../*', '!../common'], message: 'node/ sits right above common/: it imports common/ only (a single consumer\'s helper lives beside its consumer).' }] }],
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: above('workflows', 'worker', 'client', 'dev'), message: 'activities/ sits under worker/ and client/ and shares only common/ with workflows/: move the shared piece to common/ (workflow-safe) or node/ (Node-only).' }] }],
    },
  },
  {
    files: ['worker/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: above('client', 'dev'), message: 'worker/ is product: it imports neither client/ nor dev tooling; move the shared piece to node/ (or common/ if workflow-safe).' }] }],
    },
  },
  {
    files: ['client/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: above('dev'), message: 'client/ is product: starting dev processes (provider, model, stack) belongs to dev/.' }] }],
    },
  },
);

/** Import patterns reaching these top-level folders (and the test helpers), from any depth. */
function above(...folders) {
  return [...folders, 'test'].flatMap((f) => [`../${f}/**`, `../../${f}/**`, `../../../${f}/**`]);
}
