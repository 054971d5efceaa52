// Tokenization of the example programs and the syntax corpus with
// vscode-textmate and Oniguruma, as VS Code does it.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { before, describe, test } = require('node:test');
const gen = require('../scripts/gen-grammar.js');
const { loadGrammar, scopeGrid, tokenize } = require('./textmate.js');

const ROOT = path.resolve(__dirname, '..', '..', '..');

function sqFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sqFiles(full));
    else if (entry.name.endsWith('.sq')) out.push(full);
  }
  return out.sort();
}

const FILES = [
  ...sqFiles(path.join(ROOT, 'examples')),
  ...sqFiles(path.join(ROOT, 'tests', 'corpus', 'valid')),
  ...sqFiles(path.join(ROOT, 'tests', 'corpus', 'valid_main')),
];

/**
 * Lark's own terminals for comments, strings and numbers, read from serq.lark,
 * lex `text` into [{kind, line, start, end}]: the reference the grammar's
 * comment, string and number scopes are checked against.
 */
function larkLexemes(text) {
  const lark = fs.readFileSync(gen.LARK, 'utf8');
  const terminal = (name) => {
    const match = lark.match(new RegExp(`^${name}(?:\\.\\d+)?:\\s*/(.*)/\\s*$`, 'm'));
    assert.ok(match, `serq.lark defines ${name}`);
    // Python's `\UXXXXXXXX` is JavaScript's `\u{XXXXXXXX}` (with the `u` flag); the
    // examples these lex are ASCII, where Python's `\w` and `\d` are JavaScript's
    return new RegExp(match[1].replace(/\\U([0-9a-fA-F]{8})/g, '\\u{$1}'), 'yu');
  };
  const kinds = [
    ['comment', terminal('BLOCK_COMMENT')],
    ['comment', terminal('LINE_COMMENT')],
    ['string', terminal('STRING')],
    ['invalid', terminal('BAD_NUMBER')],
    ['number', terminal('NUMBER')],
    ['name', terminal('NAME')],
    ['space', terminal('WS')],
  ];
  const lexemes = [];
  let at = 0;
  while (at < text.length) {
    let found = null;
    for (const [kind, re] of kinds) {
      re.lastIndex = at;
      const m = re.exec(text);
      if (m && m[0].length > 0) {
        found = { kind, text: m[0] };
        break;
      }
    }
    if (!found) found = { kind: 'other', text: text[at] };
    lexemes.push({ kind: found.kind, start: at, end: at + found.text.length });
    at += found.text.length;
  }
  return lexemes;
}

const SCOPE_OF_KIND = { comment: /^comment\./, string: /^string\./, number: /^constant\.numeric\./, invalid: /^invalid\./ };

/** Asserts that TextMate and Lark's terminals agree on `text`'s comments, strings and numbers. */
function assertLexicallyAgrees(grammar, name, text) {
  const { endState, initial } = tokenize(grammar, text);
  assert.ok(endState.equals(initial), 'the text ends outside any comment or string');
  const grid = scopeGrid(grammar, text);
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const position = (offset) => {
    let line = lineStarts.length - 1;
    while (lineStarts[line] > offset) line -= 1;
    return [line, offset - lineStarts[line]];
  };
  for (const lexeme of larkLexemes(text)) {
    for (let offset = lexeme.start; offset < lexeme.end; offset++) {
      if (text[offset] === '\n' || text[offset] === '\r') continue;
      const [line, column] = position(offset);
      const scopes = grid[line][column] || [];
      for (const [kind, pattern] of Object.entries(SCOPE_OF_KIND)) {
        assert.equal(scopes.some((s) => pattern.test(s)), lexeme.kind === kind,
          `${name}:${line + 1}:${column + 1} is ${lexeme.kind} for Lark; TextMate: ${scopes.join(' ')}`);
      }
    }
  }
}

// Texts the corpus lacks (it has no block comment): comments and strings that
// contain each other's markers, a comment over several lines, odd numbers.
const LEXICAL = {
  'block comments': 'let a = 1; /* one */ let b = 2;\n/* over\n   three // lines\n*/ let c = 3;\n',
  'markers inside strings and comments': 'use "a//b.sq"; // "not a string" /* nor this\nuse "/*x*/";\n',
  'numbers': 'let a = 1e-3 + 2.5E+2 + .5 + 5. + 007 + 1_000 + x1 + 1.2.3 + .5.6;\n',
};

describe('every example and corpus file', () => {
  let grammar;
  before(async () => {
    grammar = await loadGrammar();
  });

  test('there are files to tokenize', () => {
    assert.ok(FILES.length >= 50, `${FILES.length} files`);
  });

  for (const file of FILES) {
    const name = path.relative(ROOT, file);
    test(name, () => assertLexicallyAgrees(grammar, name, fs.readFileSync(file, 'utf8')));
  }

  for (const [name, text] of Object.entries(LEXICAL)) {
    test(name, () => assertLexicallyAgrees(grammar, name, text));
  }
});

// Lines where a word's meaning depends on where it stands, and the scope the
// grammar gives it. Keywords are contextual in serQ.
const CASES = [
  ['set hold = 1;', 'hold', 'variable.other.attribute.serq'],
  ['set hold = 1;', 'set', 'keyword.other.statement.serq'],
  ['stage prefill : fifo;', 'prefill', 'entity.name.type.serq'],
  ['stage prefill : fifo;', 'fifo', 'support.type.stage-kind.serq'],
  ['stage D.nic.latency : delay;', 'D.nic.latency', 'entity.name.type.serq'],
  ['queue P[NP] : prefill, decode {', 'P', 'entity.name.type.queue.serq'],
  ['queue P[NP] : prefill, decode {', 'decode', 'entity.other.inherited-class.role.serq'],
  ['  pool kv { cap 10; queue fifo; }', 'queue', 'keyword.other.option.serq'],
  ['  prefill (prompt) {', 'prefill', 'entity.name.function.entry.serq'],
  ['  decode (prompt) from src {', 'decode', 'entity.name.function.entry.serq'],
  ['  decode (prompt) from src {', 'src', 'variable.other.reference.serq'],
  ['  route {', 'route', 'entity.name.function.entry.serq'],
  ['  loop {', 'loop', 'keyword.control.serq'],
  ['prefill (prompt - c) growing kv;', 'prefill', 'keyword.other.serving.serq'],
  ['prefill (prompt - c) growing kv;', 'kv', 'variable.other.reference.serq'],
  ['P[i].prefill(prompt);', 'prefill', 'variable.other.member.serq'],
  ['choose j in 2 by (queue(decode[j]));', 'queue', 'support.function.observable.serq'],
  ['choose j in 2 by (queue(decode[j]));', 'decode', 'variable.other.serq'],
  ['run up[i] (cost(up, w));', 'cost', 'entity.name.function.call.serq'],
  ['run tool (1);', 'tool', 'variable.other.reference.serq'],
  ['tool (~exp(Z));', 'tool', 'keyword.other.serving.serq'],
  ['set x = ~exp(1) + exp(0);', 'exp', 'support.function.distribution.serq'],
  ['set x = floor(y) + reusable(p, b);', 'floor', 'support.function.math.serq'],
  ['set x = floor(y) + reusable(p, b);', 'reusable', 'entity.name.function.call.serq'],
  ['set x = max j in n (w[j]);', 'max', 'support.function.aggregate.serq'],
  ['set x = min(a, b);', 'min', 'support.function.aggregate.serq'],
  ['hold kv (p) at admission (hit = cachedin(kv)) {', 'admission', 'keyword.other.option.serq'],
  ['hold kv (p) at admission (hit = cachedin(kv)) {', 'hit', ''],
  ['serve admission;', 'admission', 'keyword.other.option.serq'],
  ['set a = admission + now;', 'admission', 'variable.language.context.serq'],
  ['set a = admission + now;', 'now', 'variable.language.context.serq'],
  ['set c = cached;', 'cached', 'support.variable.attribute.serq'],
  ['lease kv (inf);', 'inf', 'constant.language.serq'],
  ['run (prompt * 0.001 + self * 0);', 'self', 'variable.language.self.serq'],
  ['run { horizon 600; warmup 60; seed 1; }', 'run', 'storage.type.item.serq'],
  ['run { horizon 600; warmup 60; seed 1; }', 'horizon', 'keyword.other.option.serq'],
  ['D pull P latency x0 share maxmin;', 'maxmin', 'constant.language.policy.serq'],
  ['arrive poisson(Lambda);', 'poisson', 'support.function.arrival.serq'],
  ['trace "turns.csv" ordered;', '"turns.csv"', 'string.quoted.double.serq'],
  ['use "lib.sq";', 'use', 'keyword.control.import.serq'],
  ['def reusable(p, b) = p;', 'reusable', 'entity.name.function.serq'],
  ['fn main() {', 'main', 'entity.name.function.serq'],
  ['let bs = 16;', 'bs', 'variable.other.constant.serq'],
  ['let x = 1.2.3;', '1.2.3', 'invalid.illegal.number.serq'],
  ['let x = .5 + 5. + 1e-3;', '1e-3', 'constant.numeric.serq'],
  ['let x = "open', '"open', 'invalid.illegal.unterminated-string.serq'],
  ['let capacity = 1; // cap', 'capacity', 'variable.other.constant.serq'],
  ['let capacity = 1; // cap', 'cap', 'comment.line.double-slash.serq'],
];

describe('contextual words', () => {
  let grammar;
  before(async () => {
    grammar = await loadGrammar();
  });
  for (const [line, word, scope] of CASES) {
    test(`${word} in \`${line}\` is ${scope || 'unscoped'}`, () => {
      const at = line.lastIndexOf(word) >= 0 && word === 'cap' ? line.lastIndexOf(word) : line.indexOf(word);
      assert.ok(at >= 0);
      const token = tokenize(grammar, line).tokens.find((t) => t.start <= at && at < t.end);
      const scopes = token.scopes.slice(1);
      if (scope) assert.ok(scopes.includes(scope), `got ${scopes.join(' ')}`);
      else assert.deepEqual(scopes, []);
    });
  }
});

// Names of any script, as serq.lark's NAME reads them (a character of Unicode's
// Alphabetic property or `_`, then those and numbers): the whole name is one token of
// the name's scope, not an ASCII prefix of it.
const NAMES = [
  ['let λ = 0.5;', 'λ', 'variable.other.constant.serq'],
  ['let मान = 2;', 'मान', 'variable.other.constant.serq'],
  ['stage 思考 : delay;', '思考', 'entity.name.type.serq'],
  ['set séjour_2 = 1;', 'séjour_2', 'variable.other.attribute.serq'],
  ['set x² = 1;', 'x²', 'variable.other.attribute.serq'],
  ['let ⅷ = 8;', 'ⅷ', 'variable.other.constant.serq'],
  ['run வரி (1);', 'வரி', 'variable.other.reference.serq'],
];

describe('names of any script', () => {
  let grammar;
  before(async () => {
    grammar = await loadGrammar();
  });
  for (const [line, word, scope] of NAMES) {
    test(`${word} in \`${line}\` is one ${scope}`, () => {
      const at = line.indexOf(word);
      const token = tokenize(grammar, line).tokens.find((t) => t.start <= at && at < t.end);
      assert.equal(line.slice(token.start, token.end), word);
      assert.ok(token.scopes.includes(scope), `got ${token.scopes.join(' ')}`);
    });
  }
});
