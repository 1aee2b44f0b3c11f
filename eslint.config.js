// eslint checks the code for mistakes; prettier (.prettierrc.json) owns the layout, so eslint-config-prettier
// turns off every eslint rule about layout, and max-len is turned back on only for what prettier cannot wrap.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import n8nNodes from 'eslint-plugin-n8n-nodes-base';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['dist/', 'integrations/*/dist/', 'coverage/', 'data/', 'bench/.cache/']),
  js.configs.recommended,
  // Not the type-checked set: it takes about 50 s over this repository on two cores, and `tsc --noEmit`
  // already checks the types.
  tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { globals: globals.node },
    rules: {
      // As tsc's noUnusedParameters: a parameter named _x is kept for its place (an interface's signature, a
      // callback's), and a property left out of an object with `...rest` is the point of the destructuring.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Prettier wraps code at 120 (printWidth) but never comments, strings or regular expressions, so max-len
      // holds those to 120 too (issue 19: lines are at most 120 characters). Comments are wrapped by hand; a
      // long string is a concatenation of pieces cut between words, with a setting's name (MEDIAFLOW_...) in
      // one piece so that grep finds it. A URL does not break. Nor does a regular expression literal: it
      // cannot be cut, and the long ones are tests' patterns that spell out a whole expected message, which
      // read better as one literal than as a new RegExp of String.raw pieces.
      'max-len': ['error', { code: 120, ignoreUrls: true, ignoreRegExpLiterals: true }],
    },
  },
  // The n8n community node (integrations/n8n) also follows n8n's lint rules for nodes, credentials and the package,
  // as n8n's node starter uses them. eslint-plugin-n8n-nodes-base is written for eslintrc, so its rule sets are
  // given here as flat configuration; its newer releases cannot be installed with npm (a `preinstall` that
  // insists on pnpm), hence 1.15.0.
  {
    files: ['integrations/n8n/package.json'],
    languageOptions: { parser: tseslint.parser },
    plugins: { 'n8n-nodes-base': n8nNodes },
    // The repository's rules are for code: a JSON document is one expression.
    rules: { ...n8nNodes.configs.community.rules, '@typescript-eslint/no-unused-expressions': 'off' },
  },
  {
    files: ['integrations/n8n/credentials/**/*.ts'],
    plugins: { 'n8n-nodes-base': n8nNodes },
    rules: n8nNodes.configs.credentials.rules,
  },
  {
    files: ['integrations/n8n/nodes/**/*.ts'],
    plugins: { 'n8n-nodes-base': n8nNodes },
    rules: {
      ...n8nNodes.configs.nodes.rules,
      // These two ask for `['main']`, written before n8n-workflow named it NodeConnectionTypes.Main (the same 'main').
      'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
      'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
    },
  },
);
