// language-configuration.json: comments, brackets and the patterns VS Code
// compiles as JavaScript regular expressions.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');

const config = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'language-configuration.json'), 'utf8'));

test("comments are serq.lark's", () => {
  assert.deepEqual(config.comments, { lineComment: '//', blockComment: ['/*', '*/'] });
});

test('brackets pair and auto-close', () => {
  const pairs = config.brackets.map(([open, close]) => open + close);
  assert.deepEqual(pairs, ['{}', '[]', '()']);
  for (const pair of pairs) assert.ok(config.autoClosingPairs.some((p) => p.open + p.close === pair));
});

test('a line that opens a block indents the next, a closing brace outdents', () => {
  const increase = new RegExp(config.indentationRules.increaseIndentPattern);
  const decrease = new RegExp(config.indentationRules.decreaseIndentPattern);
  for (const line of ['session {', '  hold kv (1) {   // after an opening brace', 'queue P[NP] : prefill {']) {
    assert.ok(increase.test(line), line);
  }
  for (const line of ['pool kv { cap 10; }', 'let a = 1; // {', '  }']) assert.ok(!increase.test(line), line);
  assert.ok(decrease.test('  } cache (prompt);'));
  assert.ok(!decrease.test('  set x = 1;'));
});

test('a word is a NAME or a NUMBER of serq.lark', () => {
  const { pattern, flags } = config.wordPattern;
  const word = new RegExp(`^(?:${pattern})$`, flags);
  for (const w of ['budget_left', 'P', 'x0', '1e-3', '.5', '2.5E+2']) assert.ok(word.test(w), w);
  // names of any script, as serq.lark's NAME reads them (a vowel sign inside `मान`)
  for (const w of ['λ', 'séjour', '思考', 'मान', 'x²', 'ⅷ', '_1']) assert.ok(word.test(w), w);
  for (const w of ['a.b', '²x', '٣', 'e\u0301']) assert.ok(!word.test(w), w);
});

test('every pattern compiles', () => {
  const patterns = [config.folding.markers.start, config.folding.markers.end];
  for (const rule of config.onEnterRules) patterns.push(rule.beforeText, rule.afterText ?? '');
  for (const pattern of patterns) assert.doesNotThrow(() => new RegExp(pattern), pattern);
});
