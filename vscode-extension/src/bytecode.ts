/**
 * Tile IR bytecode (`.tileirbc`) shown and edited as text.
 *
 * Modelled on vscode-mlir's `.mlirbc` support: a file system provider for the
 * scheme {@link BYTECODE_TEXT_SCHEME} mirrors each bytecode file on disk
 * (same path).  Reading it asks the server for `tileir/convertFromBytecode`
 * (params `{uri}` of the file on disk, answer `{output: text}`); saving it asks
 * for `tileir/convertToBytecode` (params `{uri}` of the open text document,
 * answer `{output: base64 bytecode}`) and writes the bytes to the file
 * (tile_lsp/server/bytecode.py).  A custom editor, the default for
 * `*.tileirbc`, opens that text view in place of the binary file.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';

/** URI scheme of the text view of a bytecode file; its path is the file's path. */
export const BYTECODE_TEXT_SCHEME = 'tileirbc-text';
/** View type of the custom editor registered for `*.tileirbc`. */
export const BYTECODE_EDITOR_VIEW_TYPE = 'tileir.bytecode';

const CONVERT_FROM_BYTECODE = 'tileir/convertFromBytecode';
const CONVERT_TO_BYTECODE = 'tileir/convertToBytecode';

interface ConvertResult {
  output?: unknown;
}

/** The bytecode file on disk behind a text-view URI. */
export function bytecodeFileUri(textUri: vscode.Uri): vscode.Uri {
  return textUri.with({ scheme: 'file' });
}

/** The text-view URI of a bytecode file. */
export function bytecodeTextUri(fileUri: vscode.Uri): vscode.Uri {
  return fileUri.with({ scheme: BYTECODE_TEXT_SCHEME });
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * File system of the text views.  `client()` resolves to the running
 * language client (waiting for its start) or rejects with an Error that says
 * why there is none.
 */
export class BytecodeTextFileSystem implements vscode.FileSystemProvider {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;

  constructor(private readonly client: () => Promise<LanguageClient>) {}

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const s = await vscode.workspace.fs.stat(bytecodeFileUri(uri));
    return { type: s.type, ctime: s.ctime, mtime: s.mtime, size: s.size };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const file = bytecodeFileUri(uri);
    let result: ConvertResult;
    try {
      const client = await this.client();
      result = await client.sendRequest<ConvertResult>(CONVERT_FROM_BYTECODE, {
        uri: client.code2ProtocolConverter.asUri(file),
      });
    } catch (e) {
      throw vscode.FileSystemError.Unavailable(`${file.fsPath}: ${errorText(e)}`);
    }
    if (typeof result?.output !== 'string') {
      throw vscode.FileSystemError.Unavailable(`${file.fsPath}: tile-lsp answered ${CONVERT_FROM_BYTECODE} without text`);
    }
    return new TextEncoder().encode(result.output);
  }

  async writeFile(uri: vscode.Uri): Promise<void> {
    // The text being saved is the open document, which the server has (the
    // language client syncs tileirbc-text documents); the server converts it.
    const file = bytecodeFileUri(uri);
    let result: ConvertResult;
    try {
      const client = await this.client();
      result = await client.sendRequest<ConvertResult>(CONVERT_TO_BYTECODE, {
        uri: client.code2ProtocolConverter.asUri(uri),
      });
    } catch (e) {
      throw vscode.FileSystemError.Unavailable(`cannot write ${file.fsPath} as bytecode: ${errorText(e)}`);
    }
    if (typeof result?.output !== 'string') {
      throw vscode.FileSystemError.Unavailable(`tile-lsp answered ${CONVERT_TO_BYTECODE} without bytecode`);
    }
    await vscode.workspace.fs.writeFile(file, Buffer.from(result.output, 'base64'));
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  readDirectory(): never {
    throw vscode.FileSystemError.NoPermissions('tileirbc-text has no directories');
  }

  createDirectory(): never {
    throw vscode.FileSystemError.NoPermissions('tileirbc-text has no directories');
  }

  delete(): never {
    throw vscode.FileSystemError.NoPermissions('delete the .tileirbc file itself');
  }

  rename(): never {
    throw vscode.FileSystemError.NoPermissions('rename the .tileirbc file itself');
  }
}

/** Opens the text view of the bytecode file `file` in `column`. */
export async function openBytecodeAsText(file: vscode.Uri, column?: vscode.ViewColumn): Promise<vscode.TextEditor> {
  const doc = await vscode.workspace.openTextDocument(bytecodeTextUri(file));
  const typed = doc.languageId === 'tileir' ? doc : await vscode.languages.setTextDocumentLanguage(doc, 'tileir');
  return vscode.window.showTextDocument(typed, { viewColumn: column, preview: false });
}

/**
 * The default editor of `*.tileirbc`: it replaces itself with the text view
 * ("Reopen Editor With..." still offers VS Code's own binary view).
 */
export class BytecodeEditorProvider implements vscode.CustomReadonlyEditorProvider {
  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => undefined };
  }

  async resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel): Promise<void> {
    const column = panel.viewColumn;
    panel.webview.html = '<!DOCTYPE html><html><body><p>Converting Tile IR bytecode to text...</p></body></html>';
    try {
      await openBytecodeAsText(document.uri, column);
      panel.dispose();
    } catch (e) {
      const message = errorText(e);
      panel.webview.html = `<!DOCTYPE html><html><body><p>Cannot show ${escapeHtml(document.uri.fsPath)} as text: ${escapeHtml(message)}</p></body></html>`;
      void vscode.window.showErrorMessage(`Tile IR: cannot open ${document.uri.fsPath} as text: ${message}`);
    }
  }
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);
}
