#!/usr/bin/env node
// Prints, as JSON, the TextMate scopes of the given .sq files:
// {"keywordScopes": [...], "files": {FILE: [[line, start, end, scope], ...]}}
// with 1-based lines, 1-based start columns, and the innermost scope of each
// token. tests/editors/test_vscode.py compares it with Lark's tokens.
'use strict';

const fs = require('node:fs');
const { KEYWORD_SCOPES, DEFAULT_SCOPE } = require('../scripts/gen-grammar.js');
const { loadGrammar, tokenize } = require('./textmate.js');

async function main(files) {
  const grammar = await loadGrammar();
  const out = { keywordScopes: [...Object.keys(KEYWORD_SCOPES), DEFAULT_SCOPE], files: {} };
  for (const file of files) {
    const { tokens } = tokenize(grammar, fs.readFileSync(file, 'utf8'));
    out.files[file] = tokens.map((t) => [t.line + 1, t.start + 1, t.end + 1, t.scopes[t.scopes.length - 1]]);
  }
  process.stdout.write(JSON.stringify(out));
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exit(1);
});
