// ESLint rule: workflow code (and the pure domain it imports) may import at run time only the
// workflow SDK, other workflow files and the pure domain modules listed in eslint.config.js.
// Temporal runs workflows in a deterministic sandbox: Node's built-ins, Prisma, the Temporal
// client or a clock read there break replay. Type-only imports are free (they leave no code).
import path from 'node:path';

const SDK = new Set(['@temporalio/workflow', '@temporalio/common']);

/** @type {import('eslint').Rule.RuleModule} */
export default {
  meta: {
    type: 'problem',
    schema: [{ type: 'object', properties: { pure: { type: 'array', items: { type: 'string' } } }, additionalProperties: false }],
    messages: {
      sandbox:
        "'{{source}}' is not allowed in workflow code: import @temporalio/workflow, @temporalio/common, a workflow file or a pure domain module (eslint.config.js pureDomain), or use `import type`",
    },
  },
  create(context) {
    const pure = new Set(context.options[0]?.pure ?? []);
    const allowed = (source) => {
      if (SDK.has(source)) return true;
      if (!source.startsWith('.')) return false;
      const target = path.relative(context.cwd, path.resolve(path.dirname(context.filename), source)).replace(/\.ts$/, '');
      return target.startsWith('workflows/') || pure.has(target);
    };
    const typeOnly = (node) =>
      node.importKind === 'type' ||
      node.exportKind === 'type' ||
      (node.specifiers?.length > 0 && node.specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type'));
    const check = (node) => {
      if (!node.source || typeOnly(node) || allowed(node.source.value)) return;
      context.report({ node, messageId: 'sandbox', data: { source: node.source.value } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};
