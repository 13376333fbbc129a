import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', '.scratch/**', 'bench/.tmp/**', 'web/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // The server logs through src/observability/log.ts (pino, with each line's context).
      'no-console': 'error',
    },
  },
  // The web app runs in the browser and follows the rules of React hooks.
  {
    files: ['web/src/**'],
    ...reactHooks.configs.flat.recommended,
    languageOptions: { globals: { ...globals.browser } },
  },
  // Command-line programs talk on stdout.
  {
    files: ['bin/**', 'bench/**', 'scripts/**', 'soak/**', 'src/cli/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
);
