// Loads syntaxes/serq.tmLanguage.json with vscode-textmate and the Oniguruma
// regex engine VS Code uses, and tokenizes text line by line as VS Code does.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const oniguruma = require('vscode-oniguruma');
const textmate = require('vscode-textmate');

const EXTENSION = path.resolve(__dirname, '..');
const GRAMMAR = path.join(EXTENSION, 'syntaxes', 'serq.tmLanguage.json');

let onigLoaded;
function loadOniguruma() {
  if (!onigLoaded) {
    const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
    onigLoaded = oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  }
  return onigLoaded;
}

/** The serQ grammar, or a variant of it given as a plain object (e.g. fewer patterns). */
async function loadGrammar(raw) {
  await loadOniguruma();
  const text = raw ? JSON.stringify(raw) : fs.readFileSync(GRAMMAR, 'utf8');
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) =>
      scopeName === 'source.serq' ? textmate.parseRawGrammar(text, 'serq.tmLanguage.json') : null,
  });
  return registry.loadGrammar('source.serq');
}

/**
 * Tokenizes `text`: returns {tokens, endState, initial}, each token
 * {line, start, end, text, scopes} with 0-based line and columns.
 */
function tokenize(grammar, text) {
  let state = textmate.INITIAL;
  const tokens = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const result = grammar.tokenizeLine(line, state);
    for (const t of result.tokens) {
      const end = Math.min(t.endIndex, line.length);
      if (end > t.startIndex) {
        tokens.push({ line: index, start: t.startIndex, end, text: line.slice(t.startIndex, end), scopes: t.scopes });
      }
    }
    state = result.ruleStack;
  });
  // The state outside any begin/end rule, as after an empty first line.
  const initial = grammar.tokenizeLine('', textmate.INITIAL).ruleStack;
  return { tokens, endState: state, initial };
}

/** The innermost scope of each character of `text`, per line: scopes[line][column]. */
function scopeGrid(grammar, text) {
  const grid = text.split(/\r?\n/).map((line) => new Array(line.length).fill(null));
  for (const t of tokenize(grammar, text).tokens) {
    for (let c = t.start; c < t.end; c++) grid[t.line][c] = t.scopes;
  }
  return grid;
}

module.exports = { EXTENSION, GRAMMAR, loadGrammar, tokenize, scopeGrid };

