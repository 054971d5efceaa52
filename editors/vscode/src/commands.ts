// Run, Show IR and Show kernel: asked of the language server through
// `workspace/executeCommand` when it offers them, else of the `serq` command
// line. Either way the answer opens beside the program, and a failure is
// shown as an error message, never thrown.

import { spawn } from 'node:child_process';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';
import { OutputDocuments } from './output';
import {
  cliArguments,
  cliCommand,
  failureSummary,
  interruptedSummary,
  presentResult,
  RUN,
  serverCanShow,
  serverId,
  View,
  viewOf,
  VIEWS,
  ViewOptions,
} from './results';
import { messageOf, SerqClient, serverCommand, ServerManager } from './server';

export class Views {
  private server: ServerManager | undefined;

  constructor(
    private readonly outputs: OutputDocuments,
    private readonly log: vscode.OutputChannel,
  ) {}

  /** The server to ask first (set once, after both are built). */
  useServer(server: ServerManager): void {
    this.server = server;
  }

  /**
   * Binds a command the server offers: one whose id is a view's (in any case,
   * as the server's `serq.showIR` is Show IR) opens that view; the others are
   * forwarded to the server with their arguments as they are.
   */
  bind = (id: string, client: SerqClient): vscode.Disposable | undefined => {
    const view = viewOf(id);
    if (VIEWS.some((v) => v.command === id)) return undefined; // registered by activate()
    try {
      if (view) return vscode.commands.registerCommand(id, (resource?: unknown) => this.show(view, resource));
      return vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await client.sendRequest(ExecuteCommandRequest.type, { command: id, arguments: args });
        } catch (error) {
          void vscode.window.showErrorMessage(`serQ: ${id} failed: ${messageOf(error)}`);
          return undefined;
        }
      });
    } catch (error) {
      this.log.appendLine(`serq-lsp: the server's command ${id} is not bound: ${messageOf(error)}`);
      return undefined;
    }
  };

  /**
   * Shows `view` of the program `resource` (a URI from a menu, or a URI string
   * from a code lens), or of the active editor's.
   */
  async show(view: View, resource?: unknown): Promise<void> {
    const document = await programDocument(resource);
    if (!document) {
      void vscode.window.showWarningMessage(`serQ: ${view.title} needs a serQ (.sq) file open in the editor.`);
      return;
    }
    const options: ViewOptions = {
      horizon: view === RUN ? vscode.workspace.getConfiguration('serq').get<number | null>('run.horizon') : null,
    };
    const name = path.posix.basename(document.uri.path);
    await vscode.window.withProgress(
      {
        location: view === RUN ? vscode.ProgressLocation.Notification : vscode.ProgressLocation.Window,
        title: `serQ: ${view.title} ${name}`,
        cancellable: view === RUN,
      },
      (_progress, token) => this.fetch(view, document, options, token),
    );
  }

  private async fetch(
    view: View,
    document: vscode.TextDocument,
    options: ViewOptions,
    token: vscode.CancellationToken,
  ): Promise<void> {
    const client = this.server?.client;
    const id = client && serverCanShow(view, options) ? serverId(view, client.serverCommands.offered) : undefined;
    if (client && id) {
      try {
        const result = await client.sendRequest(
          ExecuteCommandRequest.type,
          { command: id, arguments: [document.uri.toString()] },
          token,
        );
        if (token.isCancellationRequested) return;
        const { text, language } = presentResult(view, result);
        await this.outputs.show(view, document.uri, text, language);
      } catch (error) {
        if (!token.isCancellationRequested) {
          void vscode.window.showErrorMessage(`serQ: ${view.title} failed: ${messageOf(error)}`);
        }
      }
      return;
    }
    await this.fetchFromCli(view, document, options, token);
  }

  private async fetchFromCli(
    view: View,
    document: vscode.TextDocument,
    options: ViewOptions,
    token: vscode.CancellationToken,
  ): Promise<void> {
    if (document.uri.scheme !== 'file') {
      void vscode.window.showErrorMessage(
        `serQ: ${view.title} without the language server reads the file from disk: save it first.`,
      );
      return;
    }
    if (document.isDirty && !(await document.save())) return;
    const config = vscode.workspace.getConfiguration('serq');
    const { command: server, folder } = serverCommand();
    const serq = cliCommand(config.get<string>('cli.path') ?? '', server);
    const args = cliArguments(view, document.uri.fsPath, options);
    this.log.appendLine(`serq: ${[serq, ...args].join(' ')}`);
    const result = await runProcess(serq, args, folder ?? path.dirname(document.uri.fsPath), token);
    if (token.isCancellationRequested) {
      // stopped as Ctrl-C stops it: say what it had found (a livelock, an engine stopped)
      const said = interruptedSummary(result.stderr, result.code);
      if (said) {
        this.log.appendLine(result.stderr);
        void vscode.window.showWarningMessage(`serQ: ${view.title} ${said}`);
      }
      return;
    }
    if (result.spawnError) {
      void vscode.window.showErrorMessage(
        `serQ: ${view.title} needs the language server or the \`serq\` command, and neither ` +
          `could be started (${result.spawnError}). Install serq-py or set \`serq.server.path\`.`,
      );
      return;
    }
    if (result.code === 0) {
      await this.outputs.show(view, document.uri, result.stdout, view.cliLanguage);
      return;
    }
    this.log.appendLine(result.stderr || result.stdout);
    const showOutput = 'Show Output';
    const choice = await vscode.window.showErrorMessage(
      `serQ: ${view.title} failed: ${failureSummary(result.stderr, result.code)}`,
      showOutput,
    );
    if (choice === showOutput) this.log.show(true);
  }
}

/** The serQ document a command applies to: `resource` (a URI or URI string), else the active editor's. */
async function programDocument(resource: unknown): Promise<vscode.TextDocument | undefined> {
  const uri =
    resource instanceof vscode.Uri ? resource : typeof resource === 'string' ? vscode.Uri.parse(resource) : undefined;
  if (uri) {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    return open ?? vscode.workspace.openTextDocument(uri);
  }
  const active = vscode.window.activeTextEditor?.document;
  return active?.languageId === 'serq' ? active : undefined;
}

interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
  spawnError?: string;
}

/**
 * Runs `command args` in `cwd`. If `token` is cancelled it is interrupted (SIGINT, so that
 * `serq run` can say what it had found), and killed if it has not ended a moment later.
 */
function runProcess(
  command: string,
  args: string[],
  cwd: string,
  token: vscode.CancellationToken,
): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: '1' } });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let deadline: NodeJS.Timeout | undefined;
    const cancel = token.onCancellationRequested(() => {
      child.kill('SIGINT');
      deadline = setTimeout(() => child.kill('SIGKILL'), 2000);
    });
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => {
      cancel.dispose();
      if (deadline) clearTimeout(deadline);
      resolve({ code: null, stdout: '', stderr: '', spawnError: error.message });
    });
    child.on('close', (code) => {
      cancel.dispose();
      if (deadline) clearTimeout(deadline);
      resolve({
        code,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      });
    });
  });
}
