// Read-only documents beside the program that show its kernel, IR or run
// report. Each is named after the program (`mm1.kernel.sq`, `mm1.ir.json`,
// `mm1.run.txt`), which also gives it its language, and is refreshed in place
// when the command runs again. Closing one never asks to save it.

import * as vscode from 'vscode';
import { Language, outputName, View } from './results';

export const SCHEME = 'serq-output';

export class OutputDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  /** Shows `text`, in `language`, as `view` of the program at `source`. */
  async show(view: View, source: vscode.Uri, text: string, language: Language): Promise<void> {
    const uri = vscode.Uri.from({
      scheme: SCHEME,
      path: `/${outputName(view, source.path, language)}`,
      query: source.toString(),
    });
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
    let document = await vscode.workspace.openTextDocument(uri);
    if (document.languageId !== language) {
      document = await vscode.languages.setTextDocumentLanguage(document, language);
    }
    await vscode.window.showTextDocument(document, {
      viewColumn: vscode.ViewColumn.Beside,
      preserveFocus: true,
      preview: false,
    });
  }

  dispose(): void {
    this.changed.dispose();
    this.texts.clear();
  }
}
