// The boundaries a tool enforces (docs/architecture.md): promises are awaited or handled,
// modules form no import cycles, no `any`, and workflow code imports only what Temporal's
// deterministic sandbox can run — the workflow SDK and the pure domain (core/), never Node's
// built-ins, Prisma or the Temporal client (services/). Formatting is Prettier's (.prettierrc.json).
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import workflowSandbox from './scripts/eslint/workflow-sandbox.js';

export default tseslint.config(
  { ignores: ['node_modules/**', 'generated/**', '.tools/**', '.ironflow/**', 'agent/ramdisk/build/**', 'bin/**', 'scripts/**/*.mjs'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    plugins: { 'import-x': importX },
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver()],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts'],
    },
  },
  // Tests build hostile inputs by mutating documents of any shape.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  {
    // core/ is the pure domain (no I/O, no Node built-ins, no clock): workflows import it, and it imports only itself.
    files: ['workflows/**/*.ts', 'core/**/*.ts', 'worker/sandbox/**/*.ts'],
    plugins: { ironflow: { rules: { 'workflow-sandbox': workflowSandbox } } },
    rules: { 'ironflow/workflow-sandbox': 'error' },
  },
  prettier,
);
