// The dashboard's pages written as components (server/src/dashboard/**/*.tsx) are escaped by their
// renderer (docs/decisions/server-jsx.md): escaping by hand there is a sign of markup built as a
// string, and markup put in as it is (dangerouslySetInnerHTML, the Trusted component) must say why
// it is safe, in a comment starting `trusted:` on the line above it or on its own line.

const REASON = /\btrusted:\s*\S.{9,}/;

/** @type {import('eslint').Rule.RuleModule} */
const trustedHtml = {
  meta: {
    type: 'problem',
    docs: { description: 'No hand escaping in components; raw markup only where a comment says why it is safe' },
    messages: {
      escape: 'escapeXml in a component: the renderer escapes text and attributes; pass the value as it is.',
      raw: '{{what}} puts markup in as it is: say why it is safe in a comment `trusted: <why>` on the line above.',
      template: 'jsxTemplate puts markup in as it is: use the Trusted component (components/html.ts) with a reason.',
    },
    schema: [],
  },
  create(context) {
    const source = context.sourceCode;
    const tsx = context.filename.endsWith('.tsx');
    const marked = (node) => {
      const line = node.loc.start.line;
      return source.getAllComments().some((comment) => comment.loc.end.line >= line - 1 && comment.loc.start.line <= line && REASON.test(comment.value));
    };
    const raw = (node, what) => {
      if (!marked(node)) context.report({ node, messageId: 'raw', data: { what } });
    };
    return {
      ImportSpecifier(node) {
        const name = node.imported.name ?? node.imported.value;
        if (tsx && name === 'escapeXml') context.report({ node, messageId: 'escape' });
        if (name === 'jsxTemplate' && !context.filename.endsWith('components/html.ts')) context.report({ node, messageId: 'template' });
      },
      CallExpression(node) {
        if (tsx && node.callee.type === 'Identifier' && node.callee.name === 'escapeXml') context.report({ node, messageId: 'escape' });
        if (node.arguments.some((arg) => arg.type === 'Identifier' && arg.name === 'Trusted')) raw(node, 'Trusted');
      },
      JSXAttribute(node) {
        if (node.name.name === 'dangerouslySetInnerHTML') raw(node, 'dangerouslySetInnerHTML');
      },
      Property(node) {
        if (!tsx && node.key.type === 'Identifier' && node.key.name === 'dangerouslySetInnerHTML') raw(node, 'dangerouslySetInnerHTML');
      },
      JSXOpeningElement(node) {
        if (node.name.type === 'JSXIdentifier' && node.name.name === 'Trusted') raw(node, 'Trusted');
      },
    };
  },
};

export default { rules: { 'trusted-html': trustedHtml } };
