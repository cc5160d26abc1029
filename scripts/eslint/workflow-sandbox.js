// ESLint rule: workflow code and the pure domain (core/) may import at run time only the
// workflow SDK, zod, and workflow or core/ files; core/ itself only core/.
// Temporal runs workflows in a deterministic sandbox: Node's built-ins, Prisma, the Temporal
// client or a clock read there break replay. Type-only imports are free (they leave no code).
import path from 'node:path';

const SDK = new Set(['@temporalio/workflow', '@temporalio/common', 'zod']);

/** @type {import('eslint').Rule.RuleModule} */
export default {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      sandbox:
        "'{{source}}' is not allowed in workflow code: import @temporalio/workflow, @temporalio/common, zod, a workflow file or a core/ module (the pure domain; I/O lives in services/), or use `import type`",
    },
  },
  create(context) {
    const inCore = path.relative(context.cwd, context.filename).startsWith('core/');
    const allowed = (source) => {
      if (SDK.has(source)) return true;
      if (!source.startsWith('.')) return false;
      const target = path.relative(context.cwd, path.resolve(path.dirname(context.filename), source)).replace(/\.ts$/, '');
      return target.startsWith('core/') || (!inCore && target.startsWith('workflows/'));
    };
    const typeOnly = (node) =>
      node.importKind === 'type' ||
      node.exportKind === 'type' ||
      (node.specifiers?.length > 0 && node.specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type'));
    const check = (node) => {
      if (!node.source || typeOnly(node) || allowed(node.source.value)) return;
      context.report({ node, messageId: 'sandbox', data: { source: node.source.value } });
    };
    // import('…') (a module evaluated when first needed): the same rule; a computed name cannot be checked, so it is refused.
    const checkDynamic = (node) => {
      const source = node.source.type === 'Literal' && typeof node.source.value === 'string' ? node.source.value : null;
      if (source !== null && allowed(source)) return;
      context.report({ node, messageId: 'sandbox', data: { source: source ?? context.sourceCode.getText(node.source) } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: checkDynamic };
  },
};
