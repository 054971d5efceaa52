// The TextMate grammar is generated from grammar/serq.lark and
// serq/vocabulary.py, and is up to date with both.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const { test } = require('node:test');
const gen = require('../scripts/gen-grammar.js');
const { loadGrammar, tokenize } = require('./textmate.js');

const lark = fs.readFileSync(gen.LARK, 'utf8');
const keywords = gen.larkKeywords(lark);

test('the committed grammar is what scripts/gen-grammar.js writes (else: npm run generate)', () => {
  assert.equal(fs.readFileSync(gen.OUTPUT, 'utf8'), gen.render());
});

test('the keywords read from serq.lark include the ones every serQ program uses', () => {
  for (const word of ['pool', 'stage', 'session', 'workload', 'run', 'hold', 'prefill', 'fifo', 'step']) {
    assert.ok(keywords.includes(word), word);
  }
  assert.ok(!keywords.includes('NAME') && !keywords.includes('ERROR'));
  assert.ok(keywords.length > 80, `${keywords.length} keywords`);
});

test('a keyword that only a regex or a comment of serq.lark spells is not a keyword', () => {
  const words = gen.larkKeywords('// "comment"\nA: /"regex"/ | "word" // "after"\nB: "x\\"y" "two words"\n');
  assert.deepEqual(words, ['word']);
});

test('every word the table places is a keyword of serq.lark', () => {
  const stale = Object.values(gen.KEYWORD_SCOPES).flat().filter((w) => !keywords.includes(w));
  assert.deepEqual(stale, [], 'remove these from KEYWORD_SCOPES in scripts/gen-grammar.js');
});

test('a new keyword of serq.lark is highlighted without touching the table', () => {
  const groups = gen.classify([...keywords, 'brandnew']);
  assert.deepEqual(groups[gen.DEFAULT_SCOPE], ['brandnew']);
});

test('every keyword of serq.lark is highlighted as a keyword by the committed grammar', async () => {
  // The `keywords` rule alone: every keyword, on its own, gets a keyword scope.
  const raw = JSON.parse(fs.readFileSync(gen.OUTPUT, 'utf8'));
  const grammar = await loadGrammar({ ...raw, patterns: [{ include: '#keywords' }] });
  const scopes = new Set([...Object.keys(gen.KEYWORD_SCOPES), gen.DEFAULT_SCOPE]);
  const missing = keywords.filter((word) => {
    const [token] = tokenize(grammar, word).tokens;
    return !(token && token.text === word && scopes.has(token.scopes[token.scopes.length - 1]));
  });
  assert.deepEqual(missing, [], 'the TextMate grammar lacks these keywords of serq.lark');
});

test('the vocabulary is read from serq/vocabulary.py', () => {
  const vocab = gen.vocabulary(fs.readFileSync(gen.VOCABULARY, 'utf8'));
  assert.ok(vocab.CONTEXT_VARS.includes('now'));
  assert.ok(vocab.DISTRIBUTIONS.includes('exp'));
  assert.ok(vocab.OBSERVABLES.includes('budget_left'));
});
