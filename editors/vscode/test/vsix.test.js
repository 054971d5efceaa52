// The .vsix that `npm run package` builds holds exactly what VS Code loads,
// and its manifest points at files that are in it.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');
const { readZip } = require('./zip.js');

const EXTENSION = path.resolve(__dirname, '..');
const VSIX = path.join(EXTENSION, 'serq.vsix');

function load() {
  assert.ok(fs.existsSync(VSIX), 'serq.vsix is missing: `npm test` builds it (npm run package)');
  return readZip(fs.readFileSync(VSIX));
}

test('the .vsix holds the bundle, the grammar, the language configuration and nothing else', () => {
  assert.deepEqual(Object.keys(load()).sort(), [
    '[Content_Types].xml',
    'extension.vsixmanifest',
    'extension/LICENSE.txt',
    'extension/language-configuration.json',
    'extension/out/extension.js',
    'extension/package.json',
    'extension/readme.md',
    'extension/syntaxes/serq.tmLanguage.json',
  ]);
});

test('the packaged files are the ones in the source tree', () => {
  const files = load();
  for (const name of ['syntaxes/serq.tmLanguage.json', 'language-configuration.json', 'out/extension.js']) {
    assert.ok(files[`extension/${name}`].equals(fs.readFileSync(path.join(EXTENSION, name))), name);
  }
});

test('the manifest contributes the serq language for .sq files, its grammar, commands and settings', () => {
  const files = load();
  const manifest = JSON.parse(files['extension/package.json'].toString('utf8'));
  assert.equal(manifest.name, 'serq');
  assert.ok(files[`extension/${manifest.main.replace(/^\.\//, '')}`], `main ${manifest.main} is packaged`);
  const [language] = manifest.contributes.languages;
  assert.equal(language.id, 'serq');
  assert.deepEqual(language.extensions, ['.sq']);
  assert.ok(files[`extension/${language.configuration.replace(/^\.\//, '')}`]);
  const [grammar] = manifest.contributes.grammars;
  assert.equal(grammar.scopeName, 'source.serq');
  const tm = JSON.parse(files[`extension/${grammar.path.replace(/^\.\//, '')}`].toString('utf8'));
  assert.equal(tm.scopeName, 'source.serq');
  assert.deepEqual(
    manifest.contributes.commands.map((c) => c.command).sort(),
    ['serq.restartServer', 'serq.run', 'serq.showIr', 'serq.showKernel'],
  );
  const settings = manifest.contributes.configuration.properties;
  assert.equal(settings['serq.server.path'].default, 'serq-lsp');
  assert.deepEqual(settings['serq.trace.server'].enum, ['off', 'messages', 'verbose']);
  assert.equal(settings['serq.run.horizon'].default, null);
});

test('the vsixmanifest names the extension and its version', () => {
  const files = load();
  const manifest = JSON.parse(files['extension/package.json'].toString('utf8'));
  const xml = files['extension.vsixmanifest'].toString('utf8');
  assert.match(xml, new RegExp(`Id="${manifest.name}"`));
  assert.match(xml, new RegExp(`Version="${manifest.version.replace(/\./g, '\\.')}"`));
  assert.match(xml, new RegExp(`Publisher="${manifest.publisher}"`));
});

test('the bundle needs nothing but vscode and Node at run time', () => {
  const bundle = load()['extension/out/extension.js'].toString('utf8');
  const required = new Set([...bundle.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]));
  const node = new Set(require('node:module').builtinModules);
  const foreign = [...required].filter((m) => m !== 'vscode' && !node.has(m.replace(/^node:/, '')));
  assert.deepEqual(foreign, []);
  for (const command of ['serq.run', 'serq.showIr', 'serq.showKernel', 'serq.restartServer']) {
    assert.ok(bundle.includes(command), `${command} is registered by the bundle`);
  }
});
