/**
 * Read-only virtual documents for the server's lowering output (PTX, lowered
 * Tile IR), served by a TextDocumentContentProvider under the scheme
 * {@link OUTPUT_SCHEME}.  Documents of this scheme are read-only in VS Code.
 */
import * as vscode from 'vscode';

import type { LoweringOutput } from './lowering';

/** URI scheme of the output documents. */
export const OUTPUT_SCHEME = 'tileir-output';

/**
 * Holds the text of each output document; showing a new output for the same
 * source, command and options replaces the text of the open document.
 */
export class OutputDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '';
  }

  /**
   * Opens `output` beside the active editor.  `key` identifies what was
   * asked (source document, command, options): the same key reuses the URI,
   * so repeating a command refreshes its tab instead of adding one.  Texts
   * are kept for the session (closing a tab and reopening it shows the text
   * again; a language change closes and reopens the document too).
   */
  async show(output: LoweringOutput, key: string): Promise<vscode.TextEditor> {
    const uri = vscode.Uri.from({ scheme: OUTPUT_SCHEME, path: '/' + output.title, query: key });
    const id = uri.toString();
    const known = this.contents.has(id);
    this.contents.set(id, output.content);
    if (known) {
      this.changed.fire(uri);
    }
    let doc = await vscode.workspace.openTextDocument(uri);
    if (doc.languageId !== output.language) {
      doc = await vscode.languages.setTextDocumentLanguage(doc, output.language);
    }
    return vscode.window.showTextDocument(doc, {
      viewColumn: vscode.ViewColumn.Beside,
      preserveFocus: false,
      preview: false,
    });
  }

  dispose(): void {
    this.changed.dispose();
    this.contents.clear();
  }
}
