import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import trustedHtml from './eslint-trusted-html.js';

export default tseslint.config(
  { ignores: ['node_modules/', 'action/dist/', 'badge/dist/', 'reporter/dist/', 'server/dist/', '.tmp/', '.proctor/', 'test-results/', 'playwright-report/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The pages (the dashboard's, and every component elsewhere, such as the run report): escaped by
    // their renderer; raw markup only with a reason (docs/decisions/server-jsx.md).
    files: ['server/src/dashboard/**/*.ts', 'server/src/**/*.tsx'],
    ignores: ['server/src/dashboard/client/**'],
    plugins: { proctor: trustedHtml },
    rules: { 'proctor/trusted-html': 'error' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
