// The serQ extension: starts the `serq-lsp` language server for .sq files and
// adds Run, Show IR, Show kernel and Restart. It holds no language logic: the
// server does the work and the grammar files are data.

import * as vscode from 'vscode';
import { Views } from './commands';
import { OutputDocuments, SCHEME } from './output';
import { VIEWS } from './results';
import { ServerManager } from './server';

let server: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('serQ');
  const outputs = new OutputDocuments();
  const views = new Views(outputs, log);
  const manager = new ServerManager(log, views.bind);
  views.useServer(manager);
  server = manager;
  context.subscriptions.push(
    log,
    outputs,
    manager,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, outputs),
    ...VIEWS.map((view) =>
      vscode.commands.registerCommand(view.command, (resource?: unknown) => views.show(view, resource)),
    ),
    vscode.commands.registerCommand('serq.restartServer', () => manager.restart()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('serq.server')) void manager.restart();
    }),
  );
  void manager.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
