/**
 * The CUDA Tile IR extension: starts `tile-lsp serve` (LSP over stdio) with
 * vscode-languageclient for `tileir` documents, and adds the commands
 * Show PTX, Show Lowered IR, Open Bytecode as Text, Restart Language Server
 * and Show Language Server Log.
 */
import * as os from 'os';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  InlayHintRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';

import {
  BYTECODE_EDITOR_VIEW_TYPE,
  BYTECODE_TEXT_SCHEME,
  BytecodeEditorProvider,
  BytecodeTextFileSystem,
  openBytecodeAsText,
} from './bytecode';
import { looksLikeTileIR } from './detect';
import {
  DEFAULT_LOWERED_STAGE,
  LOWERED_STAGES,
  SHOW_LOWERED,
  SHOW_PTX,
  commandArguments,
  interpretLoweringResult,
  stem,
} from './lowering';
import { OUTPUT_SCHEME, OutputDocuments } from './outputDocuments';
import {
  type ExtensionSettings,
  SECTION,
  describeCommand,
  expandPath,
  needsRestart,
  readSettings,
  serverCommand,
  serverSettingsPayload,
} from './settings';

const LANGUAGE = 'tileir';
const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

function currentSettings(): ExtensionSettings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return readSettings(<T>(key: string, fallback: T) => config.get<T>(key, fallback));
}

function workspaceFolderPath(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** Owns the language client: start, restart, settings pushes. */
class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  settings: ExtensionSettings = currentSettings();

  constructor(private readonly log: vscode.LogOutputChannel) {}

  /** The running client, starting the server first if needed; rejects with the reason it could not start. */
  start(): Promise<LanguageClient> {
    if (!this.starting) {
      this.starting = this.launch();
      this.starting.catch(() => {
        this.starting = undefined; // a later command tries again
      });
    }
    return this.starting;
  }

  private async launch(): Promise<LanguageClient> {
    const folder = workspaceFolderPath();
    const cmd = serverCommand(this.settings, (p) => expandPath(p, os.homedir(), folder));
    this.log.info(`starting ${describeCommand(cmd)}`);
    const serverOptions: ServerOptions = {
      command: cmd.command,
      args: cmd.args,
      transport: TransportKind.stdio,
      options: { cwd: folder },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: LANGUAGE },
        { scheme: 'untitled', language: LANGUAGE },
        { scheme: BYTECODE_TEXT_SCHEME, language: LANGUAGE },
      ],
      outputChannel: this.log,
      traceOutputChannel: this.log,
      initializationOptions: () => serverSettingsPayload(this.settings),
      middleware: {
        provideInlayHints: (document, range, token, next) =>
          this.settings.inlayHintsEnabled ? next(document, range, token) : [],
      },
    };
    const client = new LanguageClient(SECTION, 'Tile IR Language Server', serverOptions, clientOptions);
    this.client = client;
    try {
      await client.start();
    } catch (e) {
      this.client = undefined;
      void client.dispose().catch(() => undefined);
      const why = `could not start ${describeCommand(cmd)}: ${errorText(e)}`;
      this.log.error(why);
      void vscode.window
        .showErrorMessage(`Tile IR: ${why}. Set "tileLsp.server.path" (or "tileLsp.server.pythonPath").`, 'Open Settings', 'Show Log')
        .then((choice) => {
          if (choice === 'Open Settings') {
            void vscode.commands.executeCommand('workbench.action.openSettings', SECTION);
          } else if (choice === 'Show Log') {
            this.log.show();
          }
        });
      throw new Error(why);
    }
    this.log.info('tile-lsp started');
    return client;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.starting = undefined;
    if (client) {
      try {
        await client.stop(3000);
      } catch (e) {
        this.log.warn(`stopping tile-lsp: ${errorText(e)}`);
      }
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Applies changed settings: a restart for the command line, a didChangeConfiguration otherwise. */
  async settingsChanged(): Promise<void> {
    const before = this.settings;
    this.settings = currentSettings();
    if (needsRestart(before, this.settings)) {
      this.log.info('server command changed; restarting');
      await this.restart().catch(() => undefined);
      return;
    }
    const client = this.client;
    if (!client?.isRunning()) {
      return;
    }
    await client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: serverSettingsPayload(this.settings),
    });
    if (
      before.inlayHintsEnabled !== this.settings.inlayHintsEnabled ||
      before.inlayResultTypes !== this.settings.inlayResultTypes ||
      before.inlayTileSizes !== this.settings.inlayTileSizes
    ) {
      const feature = client.getFeature(InlayHintRequest.method);
      for (const editor of vscode.window.visibleTextEditors) {
        feature.getProvider(editor.document)?.onDidChangeInlayHints.fire();
      }
    }
  }

  dispose(): void {
    void this.stop();
  }
}

/** The `tileir` document a command acts on: `resource` if given, else the active editor's. */
async function targetDocument(resource: unknown): Promise<vscode.TextDocument | undefined> {
  if (resource instanceof vscode.Uri || typeof resource === 'string') {
    const uri = typeof resource === 'string' ? vscode.Uri.parse(resource) : resource;
    return vscode.workspace.openTextDocument(uri);
  }
  const doc = vscode.window.activeTextEditor?.document;
  return doc && doc.languageId === LANGUAGE && doc.uri.scheme !== OUTPUT_SCHEME ? doc : undefined;
}

const optionalString = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** Show PTX / Show Lowered IR: ask the server, open the answer beside the IR or show its message. */
async function runLowering(
  manager: ServerManager,
  outputs: OutputDocuments,
  command: typeof SHOW_PTX | typeof SHOW_LOWERED,
  resource: unknown,
  opts: { kernel?: string; stage?: string },
): Promise<void> {
  const label = command === SHOW_PTX ? 'Show PTX' : 'Show Lowered IR';
  const doc = await targetDocument(resource);
  if (!doc) {
    void vscode.window.showErrorMessage(`${label}: open a Tile IR file first.`);
    return;
  }
  let client: LanguageClient;
  try {
    client = await manager.start();
  } catch (e) {
    void vscode.window.showErrorMessage(`${label}: ${errorText(e)}`);
    return;
  }
  const args = commandArguments(command, client.code2ProtocolConverter.asUri(doc.uri), opts);
  let raw: unknown;
  try {
    raw = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Tile IR: ${label}` },
      () => client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }),
    );
  } catch (e) {
    void vscode.window.showErrorMessage(`${label}: ${errorText(e)}`);
    return;
  }
  const fallbackTitle = stem(doc.uri.path) + (command === SHOW_PTX ? '.ptx' : '.lowered.mlir');
  const answer = interpretLoweringResult(raw, command, fallbackTitle);
  if (!answer.ok) {
    void vscode.window.showErrorMessage(`${label}: ${answer.message}`);
    return;
  }
  const key = [doc.uri.toString(), command, opts.stage ?? '', opts.kernel ?? ''].join('|');
  await outputs.show(answer.output, key);
}

/** Asks for the stage of Show Lowered IR; undefined when the user cancels. */
async function pickStage(): Promise<string | undefined> {
  const items = LOWERED_STAGES.map((s) => ({ label: s.stage, description: `after ${s.pass}`, detail: s.detail }));
  const def = items.find((i) => i.label === DEFAULT_LOWERED_STAGE);
  const quickPick = vscode.window.createQuickPick<(typeof items)[number]>();
  quickPick.title = 'Tile IR: Show Lowered IR';
  quickPick.placeholder = 'Lowering stage to show';
  quickPick.items = items;
  if (def) {
    quickPick.activeItems = [def];
  }
  const picked = await new Promise<string | undefined>((resolveStage) => {
    quickPick.onDidAccept(() => resolveStage(quickPick.selectedItems[0]?.label ?? quickPick.activeItems[0]?.label));
    quickPick.onDidHide(() => resolveStage(undefined));
    quickPick.show();
  });
  quickPick.dispose();
  return picked;
}

/** The `.tileirbc` file a command acts on: its argument, the active tab, or one the user picks. */
async function bytecodeTarget(resource: unknown): Promise<vscode.Uri | undefined> {
  if (resource instanceof vscode.Uri) {
    return resource;
  }
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (input instanceof vscode.TabInputCustom || input instanceof vscode.TabInputText) {
    if (input.uri.path.endsWith('.tileirbc')) {
      return input.uri.with({ scheme: 'file' });
    }
  }
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    filters: { 'Tile IR bytecode': ['tileirbc'] },
    openLabel: 'Open as Text',
  });
  return picked?.[0];
}

/** Gives `mlir` documents that hold cuda_tile / nv_tileas IR the `tileir` language. */
function claimTileIrMlir(doc: vscode.TextDocument): void {
  if (doc.languageId === 'mlir' && looksLikeTileIR(doc.getText())) {
    void vscode.languages.setTextDocumentLanguage(doc, LANGUAGE);
  }
}

let activeManager: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('Tile IR Language Server', { log: true });
  const manager = new ServerManager(log);
  activeManager = manager;
  const outputs = new OutputDocuments();
  context.subscriptions.push(log, manager, outputs);

  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(OUTPUT_SCHEME, outputs),
    vscode.workspace.registerFileSystemProvider(BYTECODE_TEXT_SCHEME, new BytecodeTextFileSystem(() => manager.start()), {
      isCaseSensitive: true,
    }),
    vscode.window.registerCustomEditorProvider(BYTECODE_EDITOR_VIEW_TYPE, new BytecodeEditorProvider(), {
      supportsMultipleEditorsPerDocument: false,
    }),
    vscode.commands.registerCommand('tileir.showPTX', (resource?: unknown, kernel?: unknown) =>
      runLowering(manager, outputs, SHOW_PTX, resource, { kernel: optionalString(kernel) }),
    ),
    vscode.commands.registerCommand('tileir.showLowered', async (resource?: unknown, stage?: unknown, kernel?: unknown) => {
      const chosen = optionalString(stage) ?? (await pickStage());
      if (chosen) {
        await runLowering(manager, outputs, SHOW_LOWERED, resource, { stage: chosen, kernel: optionalString(kernel) });
      }
    }),
    vscode.commands.registerCommand('tileir.openBytecodeAsText', async (resource?: unknown) => {
      const file = await bytecodeTarget(resource);
      if (!file) {
        return;
      }
      try {
        await openBytecodeAsText(file);
      } catch (e) {
        void vscode.window.showErrorMessage(`Open Bytecode as Text: ${errorText(e)}`);
      }
    }),
    vscode.commands.registerCommand('tileir.restartServer', async () => {
      log.info('restart requested');
      await manager.restart().catch(() => undefined);
    }),
    vscode.commands.registerCommand('tileir.showServerLog', () => log.show()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(SECTION)) {
        void manager.settingsChanged();
      }
    }),
    vscode.workspace.onDidOpenTextDocument(claimTileIrMlir),
  );
  vscode.workspace.textDocuments.forEach(claimTileIrMlir);

  // A server that cannot start is reported by start(); activation succeeds anyway.
  await manager.start().catch(() => undefined);
}

export function deactivate(): Promise<void> | undefined {
  const manager = activeManager;
  activeManager = undefined;
  return manager?.stop();
}
