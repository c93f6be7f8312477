// Lint rules that guard the sandbox and the async code. Workflow code must be
// deterministic: no Node built-ins, no activity implementations (types only).
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

export default tseslint.config(
  { ignores: ['node_modules/**', '.temporal/**', '.data/**', 'eslint.config.mjs', 'bin/**', 'scripts/**', 'bench/peer/**'] },
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
          paths: [...builtinModules, ...builtinModules.map((m) => `node:${m}`)].map((name) => ({
            name,
            message: 'Workflow code runs in a deterministic sandbox: do I/O in an activity.',
          })),
          patterns: [
            { group: ['../activities', '../activities/*', '../activities/**'], allowTypeImports: true, message: 'Import activities as types only: proxyActivities<typeof ...>.' },
            { group: ['../worker/**', '../client/**', '../provider/**', '../server/**', '../stack/**', '../test/**', '../model/**'], message: 'Workflow code must not reach worker, client, server, stack or provider code.' },
          ],
        },
      ],
    },
  },
  // The layers, bottom up: common; workflows; activities; worker and server
  // (process start-up); client; stack (`npm start`, everything at once); and
  // the tests, benches and experiments on top. Nothing imports a layer above
  // its own: `npm run lint` (part of `npm test`, so of CI) checks it.
  {
    files: ['common/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['../*', '!../common'], message: 'common/ is the neutral bottom layer: it imports nothing of the project.' }] }],
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: above('worker', 'server', 'client', 'stack'), message: 'activities/ sits under worker/, server/ and client/: move the shared piece to common/.' }] }],
    },
  },
  {
    files: ['worker/**/*.ts', 'server/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: above('client', 'stack'), message: 'Only client/ and stack/ may import client/: move the shared piece to common/.' }] }],
    },
  },
  {
    files: ['client/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: above('stack', 'provider', 'model', 'server'), message: 'client/ talks to a running Temporal: starting processes (dev server, provider, model) belongs to stack/ and server/.' }] }],
    },
  },
);

/** Import patterns reaching these top-level folders (and the test helpers), from any depth. */
function above(...folders) {
  return [...folders, 'test'].flatMap((f) => [`../${f}/**`, `../../${f}/**`, `../../../${f}/**`]);
}
