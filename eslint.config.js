// ESLint: JavaScript's and typescript-eslint's recommended rules over everything written by hand.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'generated/**',
      'dist/**',
      'dist.next-*/**',
      'dist.old-*/**',
      'src/shipped/*/dist/**',
      'node_modules/**',
      'bench/results/**',
      'openapi/baseline/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        console: 'readonly',
        process: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        structuredClone: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        queueMicrotask: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // A variable a closure reads before its one assignment (a URL known only once the server listens) stays let.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  // Parsed answers in tests are read member by member and asserted on; the contract's validators,
  // not these types, are what the tests check them against.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },
  {
    files: ['**/public/**/*.js', 'examples/demo-miniapp/public/**/*.js'],
    languageOptions: {
      globals: {
        window: 'readonly',
        document: 'readonly',
        navigator: 'readonly',
        location: 'readonly',
        history: 'readonly',
        HTMLElement: 'readonly',
        URLSearchParams: 'readonly',
        CustomEvent: 'readonly',
        Event: 'readonly',
        localStorage: 'readonly',
        requestAnimationFrame: 'readonly',
        btoa: 'readonly',
        CSS: 'readonly',
        FormData: 'readonly',
        Option: 'readonly',
      },
    },
  },
);
