// A stand-in for the `vscode` module, enough to activate the bundled extension
// in plain Node and drive its commands: what it registers, shows and opens is
// recorded. Anything else it touches is an inert class or function.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

/** An inert value: callable, constructible, extendable, with inert properties. */
function inert(name) {
  const target = function Inert() {};
  return new Proxy(target, {
    get(t, key) {
      if (key === 'prototype') return t.prototype;
      if (key === Symbol.toPrimitive) return () => `[${name}]`;
      if (key === 'then') return undefined;
      if (!(key in t)) t[key] = inert(`${name}.${String(key)}`);
      return t[key];
    },
    apply: () => inert(`${name}()`),
    construct: () => inert(`new ${name}`),
  });
}

class Disposable {
  constructor(fn = () => {}) { this.fn = fn; }
  static from(...items) { return new Disposable(() => items.forEach((d) => d && d.dispose && d.dispose())); }
  dispose() { this.fn(); }
}

class EventEmitter {
  constructor() {
    this.listeners = [];
    this.event = (listener) => {
      this.listeners.push(listener);
      return new Disposable(() => { this.listeners = this.listeners.filter((l) => l !== listener); });
    };
  }
  fire(value) { this.listeners.forEach((l) => l(value)); }
  dispose() { this.listeners = []; }
}

class Uri {
  constructor(scheme, p, query = '') { this.scheme = scheme; this.path = p; this.query = query; }
  static file(p) { return new Uri('file', path.resolve(p)); }
  static from({ scheme, path: p = '', query = '' }) { return new Uri(scheme, p, query); }
  static parse(s) { const m = /^([a-z-]+):(.*)$/.exec(s); return new Uri(m[1], m[2]); }
  get fsPath() { return this.path; }
  toString() {
    if (this.scheme === 'file') return pathToFileURL(this.path).href;
    return `${this.scheme}:${this.path}${this.query ? `?${this.query}` : ''}`;
  }
}

/** A fake `vscode` whose settings are `settings` (keys without `serq.`), and its record. */
function createVscode(settings = {}) {
  const record = {
    commands: new Map(), errors: [], warnings: [], shown: [], providers: new Map(), executed: [],
    channels: new Map(),
  };
  const documents = [];
  const document = (uri, text, languageId) => {
    const doc = {
      uri, languageId, isDirty: false, isUntitled: false, getText: () => text,
      save: async () => true,
    };
    documents.push(doc);
    return doc;
  };
  const languageOf = (p) => (p.endsWith('.sq') ? 'serq' : p.endsWith('.json') ? 'json' : 'plaintext');
  const vscode = {
    Disposable, EventEmitter, Uri, version: '1.95.0',
    env: { appName: 'fake', language: 'en', machineId: 'fake', sessionId: 'fake', uiKind: 1 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    ViewColumn: { Active: -1, Beside: -2, One: 1 },
    commands: {
      registerCommand(id, handler) {
        if (record.commands.has(id)) throw new Error(`command '${id}' already exists`);
        record.commands.set(id, handler);
        return new Disposable(() => record.commands.delete(id));
      },
      async executeCommand(id, ...args) { record.executed.push([id, ...args]); },
    },
    window: {
      activeTextEditor: undefined,
      createOutputChannel(name) {
        const lines = [];
        record.channels.set(name, lines);
        return { name, lines, append: (s) => lines.push(s), appendLine: (s) => lines.push(s), show() {}, clear() {}, dispose() {}, replace() {} };
      },
      async showErrorMessage(message) { record.errors.push(message); return undefined; },
      async showWarningMessage(message) { record.warnings.push(message); return undefined; },
      async showInformationMessage() { return undefined; },
      async withProgress(_options, task) {
        // `record.cancel()` cancels the latest task, as the notification's Cancel button does
        const listeners = new Set();
        const token = {
          isCancellationRequested: false,
          onCancellationRequested: (f) => { listeners.add(f); return new Disposable(() => listeners.delete(f)); },
        };
        record.cancel = () => { token.isCancellationRequested = true; listeners.forEach((f) => f()); };
        return task({ report() {} }, token);
      },
      async showTextDocument(doc, options) { record.shown.push({ doc, options }); return {}; },
    },
    workspace: {
      workspaceFolders: undefined,
      textDocuments: documents,
      getConfiguration(section) {
        return { get: (key, fallback) => (`${section}.${key}` in settings ? settings[`${section}.${key}`] : fallback) };
      },
      onDidChangeConfiguration: () => new Disposable(),
      registerTextDocumentContentProvider(scheme, provider) {
        record.providers.set(scheme, provider);
        return new Disposable();
      },
      async openTextDocument(uri) {
        const open = documents.find((d) => d.uri.toString() === uri.toString());
        if (open) return open;
        if (uri.scheme === 'file') return document(uri, fs.readFileSync(uri.fsPath, 'utf8'), languageOf(uri.path));
        const text = await record.providers.get(uri.scheme).provideTextDocumentContent(uri);
        return document(uri, text, languageOf(uri.path));
      },
    },
    languages: {
      async setTextDocumentLanguage(doc, languageId) { doc.languageId = languageId; return doc; },
    },
  };
  /** Opens `file` in the fake editor, as the active serQ document. */
  const openEditor = (file) => {
    const doc = document(Uri.file(file), fs.readFileSync(file, 'utf8'), 'serq');
    vscode.window.activeTextEditor = { document: doc };
    return doc;
  };
  const tolerant = (object, name) => new Proxy(object, {
    get: (t, key) => (key in t ? t[key] : (t[key] = inert(`${name}.${String(key)}`))),
  });
  for (const space of ['commands', 'window', 'workspace', 'languages']) {
    vscode[space] = tolerant(vscode[space], `vscode.${space}`);
  }
  const fake = tolerant(vscode, 'vscode');
  return { vscode: fake, record, openEditor };
}

/** Loads the bundle `file` with `vscode` as its `vscode` module. */
function loadBundle(file, vscode) {
  const module = { exports: {} };
  const code = fs.readFileSync(file, 'utf8');
  const wrapped = new Function('module', 'exports', 'require', '__filename', '__dirname', code);
  wrapped(module, module.exports, (id) => (id === 'vscode' ? vscode : require(id)), file, path.dirname(file));
  return module.exports;
}

module.exports = { createVscode, loadBundle };
