// What Run, Show IR and Show kernel ask for and how their answers become text.
// Nothing here imports `vscode`, so the tests load this module in plain Node.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** One of the three views of a program the extension opens beside it. */
export interface View {
  /**
   * The command id the extension registers. The server's id for the same
   * command may differ in case (`serq.showIR`): `serverId` finds it.
   */
  readonly command: 'serq.run' | 'serq.showIr' | 'serq.showKernel';
  /** What the user asked for, in messages: "Run", "Show IR". */
  readonly title: string;
  /** The `serq` subcommand that gives the same answer. */
  readonly cli: 'run' | 'ir' | 'expand';
  /** The output document's name is the program's with this suffix, and then the language's extension. */
  readonly suffix: string;
  /** The language of the `serq` command's output. */
  readonly cliLanguage: Language;
}

export type Language = 'serq' | 'json' | 'markdown' | 'plaintext';

export const RUN: View = { command: 'serq.run', title: 'Run', cli: 'run', suffix: '.run', cliLanguage: 'plaintext' };
export const SHOW_IR: View = { command: 'serq.showIr', title: 'Show IR', cli: 'ir', suffix: '.ir', cliLanguage: 'json' };
export const SHOW_KERNEL: View = {
  command: 'serq.showKernel',
  title: 'Show kernel',
  cli: 'expand',
  suffix: '.kernel',
  cliLanguage: 'serq',
};
export const VIEWS: readonly View[] = [RUN, SHOW_IR, SHOW_KERNEL];

/** The view whose command is `id`, compared without case (`serq.showIR` is Show IR). */
export function viewOf(id: string): View | undefined {
  return VIEWS.find((view) => view.command.toLowerCase() === id.toLowerCase());
}

/** Among the server's command ids, the one for `view`, if the server offers it. */
export function serverId(view: View, offered: Iterable<string>): string | undefined {
  for (const id of offered) if (viewOf(id) === view) return id;
  return undefined;
}

/** Options of a view: only Run has one, the horizon (`serq.run.horizon`). */
export interface ViewOptions {
  horizon?: number | null;
}

/**
 * Whether the server can give this view with these options. It takes the
 * document's URI and nothing else that the options need: a Run with a
 * horizon goes to the `serq` command, which has `--horizon`.
 */
export function serverCanShow(view: View, options: ViewOptions = {}): boolean {
  return !(view === RUN && typeof options.horizon === 'number');
}

/** The arguments of `serq` that print the same view of `file`. */
export function cliArguments(view: View, file: string, options: ViewOptions = {}): string[] {
  const args = [view.cli, file];
  if (view === RUN && typeof options.horizon === 'number') args.push('--horizon', String(options.horizon));
  return args;
}

const FENCED = /^\s*```([\w+-]*)[^\n]*\n([\s\S]*?)\n?```\s*$/;
const FENCE_LANGUAGES: Record<string, Language> = { serq: 'serq', sq: 'serq', json: 'json', text: 'plaintext', '': 'plaintext' };

/**
 * The document for a server's answer to `view`. The server answers in
 * markdown: one fenced block (the kernel, the IR) becomes its contents in its
 * language; other markdown (a run report, "the program has errors") stays
 * markdown. A plain string is the view's own text; an object's `text`,
 * `content`, `kernel` or `report` string is read the same way; anything else
 * is shown as JSON.
 */
export function presentResult(view: View, result: unknown): { text: string; language: Language } {
  if (result && typeof result === 'object') {
    for (const key of ['text', 'content', 'kernel', 'report']) {
      const value = (result as Record<string, unknown>)[key];
      if (typeof value === 'string') return presentResult(view, value);
    }
  }
  if (typeof result !== 'string') return { text: `${JSON.stringify(result ?? null, null, 2)}\n`, language: 'json' };
  const fenced = FENCED.exec(result);
  if (fenced && !fenced[2].includes('```')) {
    return { text: withNewline(fenced[2]), language: FENCE_LANGUAGES[fenced[1].toLowerCase()] ?? 'plaintext' };
  }
  if (/^\s*(#|\*\*|- |> )/.test(result) || result.includes('```')) return { text: withNewline(result), language: 'markdown' };
  return { text: withNewline(result), language: view.cliLanguage };
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

const EXTENSIONS: Record<Language, string> = { serq: '.sq', json: '.json', markdown: '.md', plaintext: '.txt' };

/** The name of the document that shows `view` of the program at `sourcePath`, in `language`. */
export function outputName(view: View, sourcePath: string, language: Language): string {
  return `${path.posix.basename(sourcePath).replace(/\.sq$/, '')}${view.suffix}${EXTENSIONS[language]}`;
}

/** `~/x`, `${workspaceFolder}/x` and `x` (relative to the workspace folder) as absolute paths. */
export function expandPath(command: string, workspaceFolder: string | undefined): string {
  let expanded = command.trim();
  if (expanded === '~' || expanded.startsWith('~/')) expanded = path.join(os.homedir(), expanded.slice(1));
  if (workspaceFolder) {
    expanded = expanded.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
    if (hasDirectory(expanded) && !path.isAbsolute(expanded)) expanded = path.resolve(workspaceFolder, expanded);
  }
  return expanded;
}

function hasDirectory(command: string): boolean {
  return command.includes('/') || command.includes('\\');
}

/**
 * The executable `command` names: itself if it has a directory part, else the
 * first match on `PATH` (with `PATHEXT` on Windows). `undefined` when there is none.
 */
export function findExecutable(
  command: string,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const windows = platform === 'win32';
  const extensions = windows ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : [''];
  const candidates = hasDirectory(command)
    ? [command]
    : (env.PATH ?? env.Path ?? '').split(windows ? ';' : ':').filter(Boolean).map((dir) => path.join(dir, command));
  for (const candidate of candidates) {
    for (const extension of extensions) {
      const file = candidate + extension;
      try {
        if (fs.statSync(file).isFile() && (windows || (fs.statSync(file).mode & 0o111) !== 0)) return file;
      } catch {
        // not there: try the next one
      }
    }
  }
  return undefined;
}

/**
 * The `serq` command: the setting when it is set, else the `serq` beside the
 * server's command when that has a directory (a virtualenv's `bin/`), else `serq`.
 */
export function cliCommand(cliSetting: string, serverCommand: string): string {
  if (cliSetting.trim()) return cliSetting.trim();
  if (hasDirectory(serverCommand)) {
    const dir = path.dirname(serverCommand);
    const extension = path.extname(serverCommand);
    return path.join(dir, `serq${extension}`);
  }
  return 'serq';
}

/** `serq run`'s exit status when Ctrl-C (SIGINT) stopped it. */
export const EXIT_INTERRUPTED = 130;

/**
 * What a `serq run` stopped by SIGINT had found, as one line: `stopped at t = T: ` (where
 * its clock had got to, when it said) and its first warning or error line; undefined when
 * it found nothing of the kind or did not stop as `serq run` does.
 */
export function interruptedSummary(stderr: string, exitCode: number | null): string | undefined {
  if (exitCode !== EXIT_INTERRUPTED) return undefined;
  const lines = stderr.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const found = lines.find((l) => /^(warning|error)\[/.test(l));
  if (!found) return undefined;
  const clock = lines.find((l) => l.startsWith('serq: interrupted at '))?.slice('serq: interrupted '.length);
  return clock ? `stopped ${clock}: ${found}` : `stopped: ${found}`;
}

/** A one-line reason from a failed `serq` run: its first error line, or its exit status. */
export function failureSummary(stderr: string, exitCode: number | null): string {
  const lines = stderr.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const error = lines.find((l) => /^(error\b|serq: error:)/i.test(l)) ?? lines[lines.length - 1];
  return error ?? `exit status ${exitCode}`;
}
