// Starts `serq-lsp` and keeps one client to it; restarts it on request or when
// its settings change.

import * as vscode from 'vscode';
import {
  ClientCapabilities,
  DynamicFeature,
  ExecuteCommandRegistrationOptions,
  ExecuteCommandRequest,
  Executable,
  FeatureState,
  LanguageClient,
  LanguageClientOptions,
  RegistrationData,
  ServerCapabilities,
  StaticFeature,
} from 'vscode-languageclient/node';
import { expandPath, findExecutable } from './results';

/**
 * Binds one of the server's command ids in VS Code, for a code lens or a
 * command link that names it; `undefined` when the extension has it already.
 */
export type CommandBinder = (id: string, client: SerqClient) => vscode.Disposable | undefined;

/**
 * The commands the server offers through `workspace/executeCommand`.
 *
 * This feature stands in for the library's own, which registers a VS Code
 * command for each of the server's and so would clash with the commands this
 * extension registers under the same ids (`serq.run`, ...). Here the server's
 * commands are recorded, and `bind` decides how each is reached from VS Code.
 */
export class ServerCommands implements DynamicFeature<ExecuteCommandRegistrationOptions> {
  private readonly registrations = new Map<string, { commands: readonly string[]; bound: vscode.Disposable[] }>();

  constructor(
    private readonly client: SerqClient,
    private readonly bind: CommandBinder,
  ) {}

  get registrationType() {
    return ExecuteCommandRequest.type;
  }

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.workspace ??= {};
    capabilities.workspace.executeCommand = { dynamicRegistration: true };
  }

  initialize(capabilities: ServerCapabilities): void {
    if (capabilities.executeCommandProvider) {
      this.register({ id: 'initialize', registerOptions: capabilities.executeCommandProvider });
    }
  }

  register(data: RegistrationData<ExecuteCommandRegistrationOptions>): void {
    const commands = data.registerOptions.commands ?? [];
    const bound = commands.flatMap((id) => this.bind(id, this.client) ?? []);
    this.registrations.set(data.id, { commands, bound });
  }

  unregister(id: string): void {
    this.registrations.get(id)?.bound.forEach((d) => d.dispose());
    this.registrations.delete(id);
  }

  clear(): void {
    for (const id of [...this.registrations.keys()]) this.unregister(id);
  }

  getState(): FeatureState {
    return { kind: 'workspace', id: ExecuteCommandRequest.method, registrations: this.registrations.size > 0 };
  }

  /** The ids of the commands the server offers now. */
  get offered(): string[] {
    return [...this.registrations.values()].flatMap((r) => r.commands);
  }
}

/** A language client whose `workspace/executeCommand` feature is `ServerCommands`. */
export class SerqClient extends LanguageClient {
  readonly serverCommands: ServerCommands;

  constructor(serverOptions: Executable, clientOptions: LanguageClientOptions, bind: CommandBinder) {
    super('serq', 'serQ Language Server', serverOptions, clientOptions);
    this.serverCommands = new ServerCommands(this, bind);
    this.registerFeature(this.serverCommands);
  }

  override registerFeature(feature: StaticFeature | DynamicFeature<unknown>): void {
    const isExecuteCommand =
      'registrationType' in feature && feature.registrationType.method === ExecuteCommandRequest.method;
    if (isExecuteCommand && !(feature instanceof ServerCommands)) return;
    super.registerFeature(feature);
  }
}

/** The settings that start the server, read afresh at each start. */
export function serverCommand(): { command: string; args: string[]; folder: string | undefined } {
  const config = vscode.workspace.getConfiguration('serq');
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const command = expandPath(config.get<string>('server.path') || 'serq-lsp', folder);
  return { command, args: config.get<string[]>('server.args') ?? [], folder };
}

/** Owns the client: starts, restarts and stops it. */
export class ServerManager implements vscode.Disposable {
  private current: SerqClient | undefined;
  private readonly traceChannel = vscode.window.createOutputChannel('serQ Language Server Trace');

  constructor(
    private readonly log: vscode.OutputChannel,
    private readonly bind: CommandBinder,
  ) {}

  /** The running client, if the server is up. */
  get client(): SerqClient | undefined {
    return this.current?.isRunning() ? this.current : undefined;
  }

  /** Starts the server unless it is running; says so when it cannot. */
  async start(): Promise<void> {
    if (this.current) return;
    const { command, args, folder } = serverCommand();
    const executable = findExecutable(command);
    if (!executable) {
      this.log.appendLine(`serq-lsp: \`${command}\` was not found; diagnostics are off.`);
      void this.reportMissing(command);
      return;
    }
    let client: SerqClient | undefined;
    try {
      client = new SerqClient(
        { command: executable, args, options: { cwd: folder } },
        {
          documentSelector: [
            { scheme: 'file', language: 'serq' },
            { scheme: 'untitled', language: 'serq' },
          ],
          outputChannel: this.log,
          traceOutputChannel: this.traceChannel,
        },
        this.bind,
      );
      this.current = client;
      await client.start();
      this.log.appendLine(`serq-lsp: started \`${[executable, ...args].join(' ')}\``);
    } catch (error) {
      this.current = undefined;
      this.log.appendLine(`serq-lsp: could not start \`${executable}\`: ${messageOf(error)}`);
      void client?.dispose().catch(() => undefined);
    }
  }

  /** Stops the server (if it runs) and starts it again with the current settings. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.current;
    this.current = undefined;
    if (client) await client.dispose().catch(() => undefined);
  }

  dispose(): void {
    void this.stop();
    this.traceChannel.dispose();
  }

  private async reportMissing(command: string): Promise<void> {
    const openSettings = 'Open Settings';
    const choice = await vscode.window.showErrorMessage(
      `serQ: the language server \`${command}\` was not found. Install serq-py ` +
        '(`python3 -m pip install -e .` in its repository), or set `serq.server.path` to its full path.',
      openSettings,
    );
    if (choice === openSettings) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'serq.server');
    }
  }
}

/** The message of an error of any kind. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error && typeof error === 'object' && 'message' in error) return String(error.message);
  return String(error);
}
