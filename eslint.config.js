// The boundaries a tool enforces (docs/architecture.md): promises are awaited or handled,
// modules form no import cycles, no `any`, and workflow code imports only what Temporal's
// deterministic sandbox can run — the workflow SDK and the pure domain (core/), never Node's
// built-ins, Prisma or the Temporal client (services/). Formatting is Prettier's (.prettierrc.json).
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import workflowSandbox from './scripts/eslint/workflow-sandbox.js';

// Temporal names (issue 15): a call that names a workflow, signal, query or update by a string, a
// template or a CONSTANT that holds one (MAC_CONFIRMED_SIGNAL), where its function or definition belongs.
const byName = 'name the workflow, signal, query or update by its function or definition (services/temporal, workflows/*-handles.ts), not by a string';
const stringArg = '[arguments.0.type=/^(Literal|TemplateLiteral)$/]';
const constantArg = "[arguments.0.type='Identifier'][arguments.0.name=/^[A-Z][A-Z0-9_]*$/]";
const sends = 'CallExpression[callee.property.name=/^(signal|executeUpdate|startUpdate)$/]';
const starts =
  "CallExpression[callee.object.property.name='workflow'][callee.property.name=/^(start|execute|signalWithStart|executeUpdateWithStart|startUpdateWithStart)$/]";
const queries = "CallExpression[callee.property.name='query']";
// A query's name is a word (`status`); a database client's query is SQL (`SELECT …`) and stays allowed.
const wordArg = "[arguments.0.type='Literal'][arguments.0.value=/^[A-Za-z_$][\\w$]*$/]";
const signalWithStartName = "CallExpression[callee.property.name='signalWithStart'] Property[key.name='signal']";
const temporalByName = [
  `${sends}${stringArg}`,
  `${sends}${constantArg}`,
  `${starts}${stringArg}`,
  `${starts}${constantArg}`,
  `${queries}${wordArg}`,
  `${queries}${constantArg}`,
  `${signalWithStartName}[value.type=/^(Literal|TemplateLiteral)$/]`,
  `${signalWithStartName}[value.type='Identifier'][value.name=/^[A-Z][A-Z0-9_]*$/]`,
].map((selector) => ({ selector, message: byName }));

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
  {
    // Temporal is called through services/temporal (issue 15, the role Ironic's conductor/rpcapi.py
    // plays): workflows, signals, queries and updates by their function or handle definition, never
    // by a name a typo breaks silently. Tests (which speak as tctl, the Web UI and attackers do) and
    // the bench's bare-Temporal peer keep names.
    files: ['**/*.ts'],
    ignores: ['test/**', 'bench/engine/side.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...temporalByName],
    },
  },
  {
    // Only services/temporal calls Temporal at run time; stack/ and worker/ (and the benches and tests
    // that run their own) make connections and clients. Everyone else takes a Client as a type.
    files: ['**/*.ts'],
    ignores: ['services/temporal/**', 'stack/**', 'worker/**', 'test/**', 'bench/engine/side.ts', 'bench/fleet/cycle.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@temporalio/client',
              allowTypeImports: true,
              message: 'call Temporal through services/temporal (starters, senders, readers); import only types (Client) from @temporalio/client.',
            },
          ],
        },
      ],
    },
  },
  prettier,
);
