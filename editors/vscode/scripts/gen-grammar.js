#!/usr/bin/env node
// Writes syntaxes/serq.tmLanguage.json, the TextMate grammar of serQ, from the
// words of grammar/serq.lark (every quoted word of the grammar is a keyword)
// and the names of serq/vocabulary.py (context variables, attributes,
// functions, distributions).
//
//   node scripts/gen-grammar.js           write the grammar
//   node scripts/gen-grammar.js --check   exit 1 if the committed file is stale
//
// A keyword the table below does not place still gets highlighted, as
// `keyword.other.serq`: adding a word to the Lark grammar needs only a re-run.
// Keywords are contextual in serQ (`set hold = 1;` is valid), so the patterns
// that read a declared name after `set`, `stage`, `let`, ... come before the
// keyword lists; tests/editors/test_vscode.py checks the result against the
// tokens Lark itself produces on every example.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const LARK = path.join(ROOT, 'grammar', 'serq.lark');
const VOCABULARY = path.join(ROOT, 'serq', 'vocabulary.py');
const OUTPUT = path.resolve(__dirname, '..', 'syntaxes', 'serq.tmLanguage.json');

// The scope of each keyword. Every word here must be a keyword of serq.lark
// (a test checks it); a keyword missing here falls into DEFAULT_SCOPE.
const KEYWORD_SCOPES = {
  'storage.type.item.serq': [
    'claim', 'def', 'fn', 'gauge', 'let', 'pool', 'queue', 'server', 'session', 'stage',
    'workload',
  ],
  'keyword.control.import.serq': ['use'],
  'keyword.control.serq': [
    'branch', 'choose', 'else', 'end', 'every', 'given', 'in', 'iteration', 'loop', 'of',
    'request', 'some', 'turn', 'with',
  ],
  'keyword.other.statement.serq': [
    'drop', 'grow', 'hold', 'load', 'mark', 'observe', 'release', 'run', 'set', 'transfer',
  ],
  'keyword.other.serving.serq': ['decode', 'prefill', 'tool'],
  'keyword.other.option.serq': [
    'admission', 'admit', 'arrivals', 'arrive', 'at', 'block', 'budget', 'by', 'cache', 'cap',
    'chunk', 'cost', 'evict', 'exclusive', 'first', 'from', 'growing', 'hidden', 'horizon',
    'held', 'init', 'latency', 'lease', 'memory', 'nic', 'on', 'preempt', 'pull', 'requeue',
    'reserve', 'reuse',
    'seed', 'serve', 'share', 'spill', 'to', 'trace', 'via', 'warmup', 'when',
  ],
  'support.type.stage-kind.serq': ['delay', 'fifo', 'ps', 'step'],
  'support.function.arrival.serq': ['batch', 'closed', 'poisson', 'renewal'],
  'constant.language.policy.serq': [
    'bottleneck', 'head', 'lifo', 'lru', 'maxmin', 'none', 'ordered', 'tail',
  ],
  'support.function.aggregate.serq': ['max', 'min', 'sum'],
};
const DEFAULT_SCOPE = 'keyword.other.serq';

// Names the language supplies that serq/vocabulary.py does not list.
const LANGUAGE_CONSTANTS = ['inf'];
const LANGUAGE_VARIABLES = ['self'];

// The keywords that begin an expression (`max j in n (e)`, `min(a, b)`); no other can.
const AGGREGATES = KEYWORD_SCOPES['support.function.aggregate.serq'];
// The options whose value is an expression (`budget budget;` reads a `let budget`).
const EXPRESSION_OPTIONS = [
  'arrivals', 'block', 'budget', 'cap', 'chunk', 'cost', 'horizon', 'seed', 'warmup',
];
// Just after one of these (and up to two spaces), or one of those options and a
// space or two, an expression goes on. Not after `:`, which also precedes a
// stage's kind. (Each alternative of a look-behind has a fixed width.)
const OPERATOR = '[(,\\[=+\\-*/^!<>&|?]';
const AFTER_OPERATOR = `(?<=${[
  OPERATOR, `${OPERATOR}\\s`, `${OPERATOR}\\s\\s`,
  ...EXPRESSION_OPTIONS.flatMap((w) => [`\\b${w}\\s`, `\\b${w}\\s\\s`]),
].join('|')})`;
// serq.lark's NAME: a character of Unicode's Alphabetic property or `_`, then those,
// numbers of any kind (`x²`, `a٣`) and `_`; no number begins one (`²x`, `٣`).
const NAME = '[\\p{Alphabetic}_][\\p{Alphabetic}\\p{N}_]*';
const DOTTED = `${NAME}(?:\\s*\\.\\s*${NAME})*`;

/** The quoted words of a Lark grammar, sorted: its keywords. */
function larkKeywords(text) {
  const words = new Set();
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('//', i)) {
      i = text.indexOf('\n', i);
      if (i < 0) break;
    } else if (text[i] === '"' || text[i] === '/') {
      const quote = text[i];
      let j = i + 1;
      while (j < text.length && text[j] !== quote && text[j] !== '\n') {
        j += text[j] === '\\' ? 2 : 1;
      }
      const literal = text.slice(i + 1, j);
      if (quote === '"' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(literal)) words.add(literal);
      i = j + 1;
    } else {
      i += 1;
    }
  }
  return [...words].sort();
}

/** The frozensets of serq/vocabulary.py, as {NAME: [words]}. */
function vocabulary(text) {
  const sets = {};
  const assignment = /^([A-Z_]+)\s*=\s*frozenset\(\s*\{([^}]*)\}\s*\)/gm;
  for (const match of text.matchAll(assignment)) {
    sets[match[1]] = [...match[2].matchAll(/"([^"]+)"/g)].map((m) => m[1]).sort();
  }
  for (const name of ['CONTEXT_VARS', 'BUILTIN_ATTRS', 'TRACE_ATTRS', 'MATH_FUNCS', 'OBSERVABLES',
    'DISTRIBUTIONS', 'CLAIM_AGGREGATES']) {
    if (!sets[name]) throw new Error(`serq/vocabulary.py has no frozenset ${name}`);
  }
  return sets;
}

/** Every keyword with its scope: {scope: [words]}, in the order of KEYWORD_SCOPES. */
function classify(keywords) {
  const placed = new Map();
  for (const [scope, words] of Object.entries(KEYWORD_SCOPES)) {
    for (const word of words) placed.set(word, scope);
  }
  const groups = {};
  for (const scope of [...Object.keys(KEYWORD_SCOPES), DEFAULT_SCOPE]) groups[scope] = [];
  for (const word of keywords) groups[placed.get(word) || DEFAULT_SCOPE].push(word);
  for (const scope of Object.keys(groups)) {
    if (groups[scope].length === 0) delete groups[scope];
  }
  return groups;
}

const words = (list) => `\\b(?:${list.join('|')})\\b`;

/** The TextMate grammar (a plain object) for these keywords and this vocabulary. */
function buildGrammar(keywords, vocab) {
  const groups = classify(keywords);
  const isKeyword = new Set(keywords);
  const notKeyword = (list) => list.filter((w) => !isKeyword.has(w));
  const name = (scope) => `variable.other.${scope}.serq`;

  return {
    $schema: 'https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json',
    information_for_contributors: [
      'Generated by editors/vscode/scripts/gen-grammar.js from grammar/serq.lark and',
      'serq/vocabulary.py. Do not edit: change the script and run `npm run generate`.',
    ],
    name: 'serQ',
    scopeName: 'source.serq',
    fileTypes: ['sq'],
    patterns: [{ include: '#code' }],
    repository: {
      code: {
        patterns: [
          { include: '#comments' },
          { include: '#strings' },
          { include: '#numbers' },
          { include: '#members' },
          { include: '#declarations' },
          { include: '#references' },
          { include: '#entries' },
          { include: '#draws' },
          { include: '#builtins' },
          { include: '#operands' },
          { include: '#keywords' },
          { include: '#calls' },
          { include: '#operators' },
          { include: '#punctuation' },
        ],
      },
      comments: {
        patterns: [
          {
            name: 'comment.block.serq',
            begin: '/\\*',
            end: '\\*/',
            beginCaptures: { 0: { name: 'punctuation.definition.comment.begin.serq' } },
            endCaptures: { 0: { name: 'punctuation.definition.comment.end.serq' } },
          },
          {
            name: 'comment.line.double-slash.serq',
            match: '(//).*$',
            captures: { 1: { name: 'punctuation.definition.comment.serq' } },
          },
        ],
      },
      strings: {
        patterns: [
          { name: 'string.quoted.double.serq', match: '"[^"\\n]*"' },
          { name: 'invalid.illegal.unterminated-string.serq', match: '"[^"\\n]*$' },
        ],
      },
      numbers: {
        patterns: [
          // Lark's BAD_NUMBER (a second `.`) before NUMBER, as its priority says.
          {
            name: 'invalid.illegal.number.serq',
            match: '(?<![\\p{Alphabetic}\\p{N}_.])(?:[0-9][0-9_]*)?\\.[0-9_]*\\.[0-9._]*',
          },
          {
            name: 'constant.numeric.serq',
            match: '(?<![\\p{Alphabetic}\\p{N}_.])(?:[0-9][0-9_]*\\.?[0-9_]*|\\.[0-9][0-9_]*)(?:[eE][+-]?[0-9]+)?',
          },
        ],
      },
      // After `.` comes a name, never a keyword: `P[i].prefill(p)`, `X.first_token`.
      members: {
        match: `(\\.)\\s*(${NAME})`,
        captures: {
          1: { name: 'punctuation.accessor.serq' },
          2: { name: 'variable.other.member.serq' },
        },
      },
      // A keyword followed by the name it declares.
      declarations: {
        patterns: [
          {
            match: `\\b(def|fn)\\s+(${NAME})`,
            captures: { 1: { name: 'storage.type.item.serq' }, 2: { name: 'entity.name.function.serq' } },
          },
          {
            match: `\\b(let)\\s+(${NAME})`,
            captures: { 1: { name: 'storage.type.item.serq' }, 2: { name: 'variable.other.constant.serq' } },
          },
          {
            match: `\\b(gauge)\\s+(${NAME})`,
            captures: { 1: { name: 'storage.type.item.serq' }, 2: { name: name('gauge') } },
          },
          {
            match: `\\b(pool|stage)\\s+(${DOTTED})`,
            captures: { 1: { name: 'storage.type.item.serq' }, 2: { name: 'entity.name.type.serq' } },
          },
          {
            // queue NAME [size] : role, role   (not the pool options `queue fifo`, `queue by`)
            match: `\\b(queue)\\s+(?!(?:fifo|by)\\b)(${NAME})\\s*(?:(\\[)([^\\]]*)(\\]))?\\s*(?:(:)\\s*(${NAME}(?:\\s*,\\s*${NAME})*))?`,
            captures: {
              1: { name: 'storage.type.item.serq' },
              2: { name: 'entity.name.type.queue.serq' },
              3: { name: 'punctuation.section.brackets.begin.serq' },
              4: { patterns: [{ include: '#code' }] },
              5: { name: 'punctuation.section.brackets.end.serq' },
              6: { name: 'punctuation.separator.serq' },
              7: {
                patterns: [
                  { name: 'entity.other.inherited-class.role.serq', match: NAME },
                  { include: '#punctuation' },
                ],
              },
            },
          },
          {
            // the pool options `queue fifo;` and `queue by (...)`
            match: '\\b(queue)(?=\\s+(?:fifo|by)\\b)',
            captures: { 1: { name: 'keyword.other.option.serq' } },
          },
          {
            match: `\\b(set|observe)\\s+(${DOTTED})`,
            captures: {
              1: { name: 'keyword.other.statement.serq' },
              2: { patterns: [{ include: '#members' }, { name: name('attribute'), match: NAME }] },
            },
          },
          {
            match: `\\b(mark)\\s+(${NAME})`,
            captures: { 1: { name: 'keyword.other.statement.serq' }, 2: { name: 'entity.name.label.serq' } },
          },
          {
            match: `\\b(choose)\\s+(${NAME})`,
            captures: { 1: { name: 'keyword.control.serq' }, 2: { name: name('index') } },
          },
          {
            match: `\\b(hidden)\\s+(${NAME}(?:\\s*,\\s*${NAME})*)`,
            captures: {
              1: { name: 'keyword.other.option.serq' },
              2: { patterns: [{ name: name('attribute'), match: NAME }, { include: '#punctuation' }] },
            },
          },
          {
            // `run { ... }`, the run settings (`run` is otherwise a statement)
            match: '^\\s*(run)(?=\\s*\\{)',
            captures: { 1: { name: 'storage.type.item.serq' } },
          },
          {
            // `at admission (...)`, `serve admission;` (elsewhere `admission` is a context variable)
            match: '\\b(at|serve)\\s+(admission)\\b',
            captures: { 1: { name: 'keyword.other.option.serq' }, 2: { name: 'keyword.other.option.serq' } },
          },
          {
            // `D pull P latency x share maxmin;`
            match: `\\b(${NAME})\\s+(pull)\\s+(${NAME})`,
            captures: {
              1: { name: 'entity.name.type.queue.serq' },
              2: { name: 'keyword.other.option.serq' },
              3: { name: 'entity.name.type.queue.serq' },
            },
          },
        ],
      },
      // A keyword followed by a reference to something declared: the word after it
      // is a name even when it spells a keyword (`run prefill (x);` for a stage `prefill`).
      references: {
        match: `\\b(hold|grow|drop|release|load|lease|growing|from|to|on|in|via|memory|spill|request|run)\\s+(${NAME})`,
        captures: {
          1: { patterns: [{ include: '#keywords' }] },
          2: { name: 'variable.other.reference.serq' },
        },
      },
      // A queue's entries: `route {`, `prefill (prompt) {`, `decode (p) from src {`.
      entries: {
        patterns: [
          {
            match: `^\\s*(?!branch\\b)(${NAME})(?=\\s*\\((?:[^()]|\\([^()]*\\))*\\)\\s*(?:from\\s+${NAME}\\s*)?\\{)`,
            captures: { 1: { name: 'entity.name.function.entry.serq' } },
          },
          {
            match: `^\\s*(?!${words(keywords)})(${NAME})(?=\\s*\\{)`,
            captures: { 1: { name: 'entity.name.function.entry.serq' } },
          },
        ],
      },
      draws: {
        patterns: [
          {
            match: `(~)\\s*(${words(vocab.DISTRIBUTIONS)})`,
            captures: {
              1: { name: 'keyword.operator.draw.serq' },
              2: { name: 'support.function.distribution.serq' },
            },
          },
          {
            match: `(~)\\s*(${NAME})`,
            captures: {
              1: { name: 'keyword.operator.draw.serq' },
              2: { name: 'entity.name.function.distribution.serq' },
            },
          },
        ],
      },
      builtins: {
        patterns: [
          {
            // `args.number("name", default)`: a program argument (`use "std/args";`).
            name: 'support.function.library.serq',
            match: '\\b(?:args)\\b\\s*\\.\\s*number\\b',
          },
          {
            // a claim's aggregates of the run's observations: `total(obs)`, ...
            name: 'support.function.aggregate.claim.serq',
            match: `${words(vocab.CLAIM_AGGREGATES)}(?=\\s*\\()`,
          },
          {
            // `queue(X)` is the observable; `queue` before anything else is a keyword.
            name: 'support.function.observable.serq',
            match: `${words(vocab.OBSERVABLES)}(?=\\s*\\()`,
          },
          {
            name: 'support.function.math.serq',
            match: `${words(notKeyword(vocab.MATH_FUNCS))}(?=\\s*\\()`,
          },
          { name: 'variable.language.context.serq', match: words(vocab.CONTEXT_VARS) },
          {
            name: 'support.variable.attribute.serq',
            match: words([...vocab.BUILTIN_ATTRS, ...vocab.TRACE_ATTRS].sort()),
          },
          { name: 'constant.language.serq', match: words(LANGUAGE_CONSTANTS) },
          { name: 'variable.language.self.serq', match: words(LANGUAGE_VARIABLES) },
        ],
      },
      // Where an expression goes on (after `(`, `,`, `[` or an operator) a word
      // is a name, except an aggregate: `(cost(up, w))` calls a `def cost`.
      operands: {
        patterns: [
          {
            name: 'entity.name.function.call.serq',
            match: `${AFTER_OPERATOR}(?!${words(AGGREGATES)})${words(keywords)}(?=\\()`,
          },
          {
            name: 'variable.other.serq',
            match: `${AFTER_OPERATOR}(?!${words(AGGREGATES)})${words(keywords)}`,
          },
        ],
      },
      keywords: {
        patterns: Object.entries(groups).map(([scope, list]) => ({ name: scope, match: words(list) })),
      },
      calls: {
        match: `\\b(${NAME})(?=\\()`,
        captures: { 1: { name: 'entity.name.function.call.serq' } },
      },
      operators: {
        patterns: [
          { name: 'keyword.operator.logical.serq', match: '&&|\\|\\||!(?!=)' },
          { name: 'keyword.operator.comparison.serq', match: '==|!=|<=|>=|<|>' },
          { name: 'keyword.operator.assignment.serq', match: '=' },
          { name: 'keyword.operator.arithmetic.serq', match: '[-+*/^]' },
          { name: 'keyword.operator.ternary.serq', match: '[?:]' },
        ],
      },
      punctuation: {
        patterns: [
          { name: 'punctuation.terminator.statement.serq', match: ';' },
          { name: 'punctuation.separator.comma.serq', match: ',' },
          { name: 'punctuation.section.block.begin.serq', match: '\\{' },
          { name: 'punctuation.section.block.end.serq', match: '\\}' },
          { name: 'punctuation.section.brackets.begin.serq', match: '\\[' },
          { name: 'punctuation.section.brackets.end.serq', match: '\\]' },
          { name: 'punctuation.section.parens.begin.serq', match: '\\(' },
          { name: 'punctuation.section.parens.end.serq', match: '\\)' },
        ],
      },
    },
  };
}

/** The grammar file's text, from the repository's serq.lark and vocabulary.py. */
function render() {
  const keywords = larkKeywords(fs.readFileSync(LARK, 'utf8'));
  const vocab = vocabulary(fs.readFileSync(VOCABULARY, 'utf8'));
  return `${JSON.stringify(buildGrammar(keywords, vocab), null, 2)}\n`;
}

module.exports = {
  KEYWORD_SCOPES, DEFAULT_SCOPE, LARK, VOCABULARY, OUTPUT,
  larkKeywords, vocabulary, classify, buildGrammar, render,
};

if (require.main === module) {
  const text = render();
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(OUTPUT) ? fs.readFileSync(OUTPUT, 'utf8') : '';
    if (current !== text) {
      console.error(`${path.relative(process.cwd(), OUTPUT)} is stale: run \`npm run generate\``);
      process.exit(1);
    }
  } else {
    fs.writeFileSync(OUTPUT, text);
  }
}
