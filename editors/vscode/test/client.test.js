// The client: its pure helpers (src/results.ts), then the bundled extension
// activated against a stand-in `vscode` module (test/fake-vscode.js), with no
// server, with the `serq` command line, with a fake server that offers
// serq-lsp's commands, and with the real serq-lsp when it is installed.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, describe, test } = require('node:test');
const esbuild = require('esbuild');
const { createVscode, loadBundle } = require('./fake-vscode.js');

const EXTENSION = path.resolve(__dirname, '..');
const ROOT = path.resolve(EXTENSION, '..', '..');
const BUNDLE = path.join(EXTENSION, 'out', 'extension.js');
const MM1 = path.join(ROOT, 'examples', 'mm1.sq');

function loadTypeScript(file) {
  const built = esbuild.buildSync({
    entryPoints: [file], bundle: true, platform: 'node', format: 'cjs', write: false, external: ['vscode'],
  });
  const module = { exports: {} };
  new Function('module', 'exports', 'require', built.outputFiles[0].text)(module, module.exports, require);
  return module.exports;
}

describe('src/results.ts', () => {
  const r = loadTypeScript(path.join(EXTENSION, 'src', 'results.ts'));

  test('the server spells Show IR `serq.showIR`; the extension registers `serq.showIr`', () => {
    assert.equal(r.viewOf('serq.showIR'), r.SHOW_IR);
    assert.equal(r.viewOf('serq.showIr'), r.SHOW_IR);
    assert.equal(r.viewOf('serq.cancelRun'), undefined);
    assert.equal(r.serverId(r.SHOW_IR, ['serq.run', 'serq.showIR']), 'serq.showIR');
    assert.equal(r.serverId(r.SHOW_KERNEL, ['serq.run']), undefined);
  });

  test('a Run with a horizon goes to `serq run --horizon`', () => {
    assert.equal(r.serverCanShow(r.RUN, { horizon: 600 }), false);
    assert.equal(r.serverCanShow(r.RUN, { horizon: null }), true);
    assert.equal(r.serverCanShow(r.SHOW_IR, { horizon: 600 }), true);
    assert.deepEqual(r.cliArguments(r.RUN, 'a.sq', { horizon: 600 }), ['run', 'a.sq', '--horizon', '600']);
    assert.deepEqual(r.cliArguments(r.SHOW_KERNEL, 'a.sq', { horizon: 600 }), ['expand', 'a.sq']);
    assert.deepEqual(r.cliArguments(r.SHOW_IR, 'a.sq'), ['ir', 'a.sq']);
  });

  test("the server's answers become documents", () => {
    assert.deepEqual(r.presentResult(r.SHOW_KERNEL, '```serq\nstage s : delay;\n```'), { text: 'stage s : delay;\n', language: 'serq' });
    assert.deepEqual(r.presentResult(r.SHOW_IR, '```json\n{}\n```'), { text: '{}\n', language: 'json' });
    assert.equal(r.presentResult(r.RUN, '# Run report\n\n- **turns**: 3').language, 'markdown');
    assert.equal(r.presentResult(r.SHOW_KERNEL, '**No kernel**: the program has errors.').language, 'markdown');
    assert.deepEqual(r.presentResult(r.SHOW_KERNEL, 'stage s : delay;'), { text: 'stage s : delay;\n', language: 'serq' });
    assert.deepEqual(r.presentResult(r.SHOW_KERNEL, { kernel: 'x' }), { text: 'x\n', language: 'serq' });
    assert.deepEqual(r.presentResult(r.RUN, { turns: 3 }), { text: '{\n  "turns": 3\n}\n', language: 'json' });
    assert.deepEqual(r.presentResult(r.RUN, null), { text: 'null\n', language: 'json' });
  });

  test('output documents are named after the program', () => {
    assert.equal(r.outputName(r.SHOW_KERNEL, '/w/examples/mm1.sq', 'serq'), 'mm1.kernel.sq');
    assert.equal(r.outputName(r.SHOW_IR, '/w/mm1.sq', 'json'), 'mm1.ir.json');
    assert.equal(r.outputName(r.RUN, '/w/mm1.sq', 'markdown'), 'mm1.run.md');
    assert.equal(r.outputName(r.RUN, '/w/mm1.sq', 'plaintext'), 'mm1.run.txt');
  });

  test('the `serq` command is the setting, or the one beside serq-lsp, or the one on PATH', () => {
    assert.equal(r.cliCommand('/opt/serq', '/venv/bin/serq-lsp'), '/opt/serq');
    assert.equal(r.cliCommand('', '/venv/bin/serq-lsp'), path.join('/venv/bin', 'serq'));
    assert.equal(r.cliCommand('  ', 'serq-lsp'), 'serq');
  });

  test('server paths: ~, ${workspaceFolder} and relative paths', () => {
    assert.equal(r.expandPath('serq-lsp', '/ws'), 'serq-lsp');
    assert.equal(r.expandPath('.venv/bin/serq-lsp', '/ws'), path.resolve('/ws', '.venv/bin/serq-lsp'));
    assert.equal(r.expandPath('${workspaceFolder}/bin/serq-lsp', '/ws'), '/ws/bin/serq-lsp');
    assert.equal(r.expandPath('~/bin/serq-lsp', undefined), path.join(os.homedir(), 'bin/serq-lsp'));
  });

  test('executables are found on PATH, and only executables', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serq-path-'));
    fs.writeFileSync(path.join(dir, 'serq-lsp'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'plain'), 'x', { mode: 0o644 });
    const env = { PATH: `/nonexistent:${dir}` };
    assert.equal(r.findExecutable('serq-lsp', env, 'linux'), path.join(dir, 'serq-lsp'));
    assert.equal(r.findExecutable('plain', env, 'linux'), undefined);
    assert.equal(r.findExecutable('missing', env, 'linux'), undefined);
    assert.equal(r.findExecutable(path.join(dir, 'serq-lsp'), {}, 'linux'), path.join(dir, 'serq-lsp'));
  });

  test('a failed `serq` is summed up by its error line', () => {
    const usage = "usage: serq [-h] COMMAND\nserq: error: argument COMMAND: invalid choice: 'run'\n";
    assert.equal(r.failureSummary(usage, 2), "serq: error: argument COMMAND: invalid choice: 'run'");
    const parse = 'error[E-parse]: expected `;`\n --> a.sq:1:5\n';
    assert.equal(r.failureSummary(parse, 1), 'error[E-parse]: expected `;`');
    assert.equal(r.failureSummary('', 3), 'exit status 3');
  });

  test('an interrupted `serq run` is summed up by its clock and its first finding', () => {
    const said = 'warning[W-stall]: a livelock at pool `kv`: ...\n --> a.sq:4:11\n\nserq: interrupted at t = 262144\n';
    assert.equal(r.interruptedSummary(said, 130), 'stopped at t = 262144: warning[W-stall]: a livelock at pool `kv`: ...');
    assert.equal(r.interruptedSummary('warning[W-stall]: x\nserq: interrupted\n', 130), 'stopped: warning[W-stall]: x');
    assert.equal(r.interruptedSummary('serq: interrupted at t = 3\n', 130), undefined, 'nothing found');
    assert.equal(r.interruptedSummary(said, 143), undefined, 'killed, not interrupted');
  });
});

/** Activates a fresh copy of the bundle with `settings`; returns the fake's record and helpers. */
async function activate(settings) {
  const fake = createVscode(settings);
  fake.openEditor(MM1);
  const extension = loadBundle(BUNDLE, fake.vscode);
  await extension.activate({ subscriptions: [] });
  return { ...fake, extension };
}

async function until(condition, what, ms = 20000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const shownAs = (record) => record.shown.map(({ doc }) => [path.posix.basename(doc.uri.path), doc.languageId, doc.getText()]);

describe('the extension without a server', () => {
  let dir;
  let serq;
  before(() => {
    assert.ok(fs.existsSync(BUNDLE), 'out/extension.js is missing: `npm test` builds it');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serq-cli-'));
    serq = path.join(dir, 'serq');
    fs.writeFileSync(serq, [
      '#!/bin/sh',
      'if grep -q BROKEN "$2"; then echo "error[E-parse]: expected \\`;\\`" >&2; echo " --> $2:1:1" >&2; exit 1; fi',
      'case "$1" in',
      '  expand) echo "stage s : delay;" ;;',
      '  ir) echo \'{"version": 1}\' ;;',
      '  run) if grep -q LIVELOCK "$2"; then',
      '         trap \'echo "warning[W-stall]: a livelock at pool \\`kv\\`" >&2; echo "serq: interrupted at t = 5" >&2; exit 130\' INT',
      '         while true; do sleep 0.05; done',
      '       fi',
      '       echo "report of $2 $3 $4" ;;',
      'esac',
    ].join('\n'), { mode: 0o755 });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('registers its four commands and says that serq-lsp is missing', async () => {
    const { record, extension } = await activate({ 'serq.server.path': '/nonexistent/serq-lsp' });
    assert.deepEqual([...record.commands.keys()].sort(), ['serq.restartServer', 'serq.run', 'serq.showIr', 'serq.showKernel']);
    await until(() => record.errors.length > 0, 'the error message');
    assert.match(record.errors[0], /`\/nonexistent\/serq-lsp` was not found.*serq\.server\.path/);
    await extension.deactivate();
  });

  test('shows the kernel, the IR and a run from the `serq` command line', async () => {
    const settings = { 'serq.server.path': '/nonexistent/serq-lsp', 'serq.cli.path': serq, 'serq.run.horizon': 600 };
    const { record, extension } = await activate(settings);
    await record.commands.get('serq.showKernel')();
    await record.commands.get('serq.showIr')();
    await record.commands.get('serq.run')();
    assert.deepEqual(shownAs(record), [
      ['mm1.kernel.sq', 'serq', 'stage s : delay;\n'],
      ['mm1.ir.json', 'json', '{"version": 1}\n'],
      ['mm1.run.txt', 'plaintext', `report of ${MM1} --horizon 600\n`],
    ]);
    assert.equal(record.shown[0].options.viewColumn, -2, 'beside the program');
    await extension.deactivate();
  });

  test('a Run cancelled from its notification says what serq had found', async () => {
    const stuck = path.join(dir, 'livelock.sq');
    fs.writeFileSync(stuck, '// LIVELOCK\n');
    const { record, vscode, extension } = await activate({ 'serq.server.path': '/nonexistent/serq-lsp', 'serq.cli.path': serq });
    const run = record.commands.get('serq.run')(vscode.Uri.file(stuck));
    await new Promise((resolve) => setTimeout(resolve, 300)); // the run has started
    record.cancel();
    await run;
    assert.equal(record.shown.length, 0);
    assert.deepEqual(record.warnings, ['serQ: Run stopped at t = 5: warning[W-stall]: a livelock at pool `kv`']);
    await extension.deactivate();
  });

  test("reports the command line's error", async () => {
    const broken = path.join(dir, 'broken.sq');
    fs.writeFileSync(broken, 'BROKEN\n');
    const { record, vscode, extension } = await activate({ 'serq.server.path': '/nonexistent/serq-lsp', 'serq.cli.path': serq });
    await record.commands.get('serq.showIr')(vscode.Uri.file(broken));
    assert.equal(record.shown.length, 0);
    assert.ok(record.errors.includes('serQ: Show IR failed: error[E-parse]: expected `;`'), record.errors.join('\n'));
    await extension.deactivate();
  });

  test('says so when neither the server nor `serq` can be started', async () => {
    const { record, extension } = await activate({ 'serq.server.path': '/nonexistent/serq-lsp', 'serq.cli.path': '/nonexistent/serq' });
    await record.commands.get('serq.showKernel')();
    assert.ok(record.errors.some((e) => /Show kernel needs the language server or the `serq` command/.test(e)), record.errors.join('\n'));
    await extension.deactivate();
  });

  test('asks for a serQ file when none is open', async () => {
    const fake = createVscode({ 'serq.server.path': '/nonexistent/serq-lsp' });
    const extension = loadBundle(BUNDLE, fake.vscode);
    await extension.activate({ subscriptions: [] });
    await fake.record.commands.get('serq.run')();
    assert.deepEqual(fake.record.warnings, ['serQ: Run needs a serQ (.sq) file open in the editor.']);
    await extension.deactivate();
  });
});

describe('the extension with a server that offers the commands', () => {
  let log;
  before(() => {
    log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'serq-server-')), 'requests.jsonl');
    process.env.FAKE_SERVER_LOG = log;
  });
  after(() => delete process.env.FAKE_SERVER_LOG);

  test("forwards Show kernel and Show IR with the document's URI, and shows the server's error", async () => {
    const { record, extension } = await activate({
      'serq.server.path': process.execPath,
      'serq.server.args': [path.join(__dirname, 'fake-server.js')],
      'serq.cli.path': '/nonexistent/serq',
    });
    // the server's own ids, for its code lenses: `serq.showIR` opens Show IR, others are forwarded
    await until(() => record.commands.has('serq.showIR') && record.commands.has('serq.cancelRun'), "the server's commands");
    assert.equal(record.errors.length, 0, record.errors.join('\n'));
    await record.commands.get('serq.showKernel')();
    await record.commands.get('serq.showIR')(`file://${MM1}`);
    await record.commands.get('serq.run')();
    assert.deepEqual(shownAs(record), [
      ['mm1.kernel.sq', 'serq', 'stage s : delay;\n'],
      ['mm1.ir.json', 'json', '{"version": 1}\n'],
    ]);
    assert.deepEqual(record.errors, ['serQ: Run failed: the run failed (1): no simulator here']);
    assert.equal(await record.commands.get('serq.cancelRun')(`file://${MM1}`), false);
    const commands = fs.readFileSync(log, 'utf8').trim().split('\n').map(JSON.parse)
      .filter((m) => m.method === 'workspace/executeCommand').map((m) => m.params);
    assert.deepEqual(commands, [
      { command: 'serq.showKernel', arguments: [`file://${MM1}`] },
      { command: 'serq.showIR', arguments: [`file://${MM1}`] },
      { command: 'serq.run', arguments: [`file://${MM1}`] },
      { command: 'serq.cancelRun', arguments: [`file://${MM1}`] },
    ]);
    await extension.deactivate();
    assert.ok(!record.commands.has('serq.showIR'), "the server's commands go with it");
  });
});

/** The path of `command` on PATH, or undefined. */
function which(command) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    try {
      fs.accessSync(path.join(dir, command), fs.constants.X_OK);
      return path.join(dir, command);
    } catch {
      // not here
    }
  }
  return undefined;
}

const realServer = which('serq-lsp');

describe('the extension with serq-lsp', { skip: !realServer && 'serq-lsp is not installed' }, () => {
  test('shows the kernel of examples/mm1.sq', async () => {
    const { record, extension } = await activate({});
    await until(() => record.commands.has('serq.showIR'), "serq-lsp's commands");
    await record.commands.get('serq.showKernel')();
    const [[name, language, text]] = shownAs(record);
    assert.equal(name, 'mm1.kernel.sq');
    assert.equal(language, 'serq');
    assert.match(text, /stage server : fifo\(1\);/);
    assert.deepEqual(record.errors, []);
    await extension.deactivate();
  });
});
