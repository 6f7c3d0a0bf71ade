import { INSPECT_USAGE } from '../../src/cli/inspect-command.js';
import { REPLAY_USAGE } from '../../src/cli/replay-command.js';
import { RESUME_USAGE } from '../../src/cli/resume-command.js';
import { COMMON_FLAGS } from '../../src/cli/run-flags.js';
import { isScenePath } from '../../src/cli/scene-file.js';
import { loadScene, scenesDirectory } from '../../src/cli/scene-loader.js';
import { USAGE } from '../../src/cli/usage.js';
import { WORKER_USAGE } from '../../src/cli/worker-command.js';

/** What a `sh` block may name: package.json's scripts and the CLI's commands and flags. */
export type KnownCommands = {
  scripts: ReadonlySet<string>;
  /** `troupe` commands, from the usage text (`run`, `resume`, `replay`, `list`, `inspect`, `help`). */
  commands: ReadonlySet<string>;
  /** The flags of a command; for `run`, of the scene named too. */
  flagsOf(command: string, scene: string | undefined): Promise<ReadonlySet<string>>;
  /** Why `troupe run <scene>` cannot load that scene, or `undefined` when it can. */
  sceneProblem(scene: string): Promise<string | undefined>;
};

/** The commands, scripts and flags as the CLI and package.json define them today. */
export function knownCommands(scripts: Readonly<Record<string, string>>): KnownCommands {
  const commands = new Set([...USAGE.matchAll(/^ {2}troupe (\w+)/gm)].map((match) => match[1]!));
  const flagsIn = (text: string) => [...text.matchAll(/(?:^|[\s[])--([a-z][\w-]*)/g)].map((match) => match[1]!);
  return {
    scripts: new Set(Object.keys(scripts)),
    commands,
    async flagsOf(command, scene) {
      if (command === 'inspect') return new Set([...flagsIn(INSPECT_USAGE), 'help']);
      // The usage line names every flag; the text under it mentions `troupe run`'s too.
      if (command === 'resume') return new Set([...flagsIn(RESUME_USAGE.split('\n')[0]!), 'help']);
      if (command === 'replay') return new Set([...flagsIn(REPLAY_USAGE.split('\n')[0]!), 'help']);
      if (command === 'worker') return new Set([...flagsIn(WORKER_USAGE.split('\n')[0]!), 'help']);
      if (command !== 'run') return new Set(['help']);
      const flags = new Set(Object.keys(COMMON_FLAGS));
      if (scene !== undefined && !isScenePath(scene)) {
        const loaded = await loadScene(scenesDirectory(undefined, {}), scene);
        if (loaded.ok) for (const name of Object.keys(loaded.value.definition.options ?? {})) flags.add(name);
      }
      return flags;
    },
    async sceneProblem(scene) {
      // A scene file is the reader's own (`./scenes/duel.ts` in their project): only its flags are checked.
      if (isScenePath(scene)) return undefined;
      const loaded = await loadScene(scenesDirectory(undefined, {}), scene);
      return loaded.ok ? undefined : loaded.problem.message;
    },
  };
}

/**
 * What is wrong with the commands of one `sh` block: an `npm run X` (or `npm test`, `npm start`)
 * with no such script, a `troupe` command or flag the CLI does not know. Comments (`# …`),
 * environment assignments (`A=b troupe …`) and pipes are understood; other programs are left alone.
 */
export async function shellProblems(code: string, known: KnownCommands): Promise<string[]> {
  const problems: string[] = [];
  for (const line of code.split('\n')) {
    const command = line.replace(/(^|\s)#.*$/, '').trim();
    for (const segment of command.split(/&&|\|\||[|;]/)) {
      const words = segment.trim().split(/\s+/).filter((word) => word !== '');
      while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) words.shift();
      if (words[0] === 'npm') problems.push(...npmProblems(words, known));
      const troupe = words[0] === 'troupe' ? words.slice(1) : words[0] === 'npx' && words[1] === 'troupe' ? words.slice(2) : undefined;
      if (troupe !== undefined) problems.push(...(await troupeProblems(troupe, known)));
    }
  }
  return problems;
}

function npmProblems(words: readonly string[], known: KnownCommands): string[] {
  const [, verb, script] = words;
  const named = verb === 'test' || verb === 'start' ? verb : verb === 'run' || verb === 'run-script' ? script : undefined;
  if (named === undefined || known.scripts.has(named)) return [];
  return [`npm ${verb}${verb === named ? '' : ` ${named}`}: package.json has no script "${named}" (it has ${[...known.scripts].join(', ')})`];
}

async function troupeProblems(words: readonly string[], known: KnownCommands): Promise<string[]> {
  const [command, ...rest] = words;
  if (command === undefined || command === '--help' || command === '-h') return [];
  if (!known.commands.has(command)) return [`troupe ${command}: no such command (the CLI has ${[...known.commands].join(', ')})`];
  const scene = command === 'run' ? rest.find((word) => !word.startsWith('-')) : undefined;
  const flags = await known.flagsOf(command, scene);
  const problems: string[] = [];
  const missing = scene === undefined || scene.includes('<') ? undefined : await known.sceneProblem(scene);
  if (missing !== undefined) problems.push(`troupe run ${scene}: ${missing}`);
  for (const word of rest) {
    if (word === '-h' || !word.startsWith('--')) continue;
    const flag = word.slice(2).split('=')[0]!;
    if (!flags.has(flag)) problems.push(`troupe ${command}${scene === undefined ? '' : ` ${scene}`} --${flag}: no such flag (it has ${[...flags].map((name) => `--${name}`).join(', ')})`);
  }
  return problems;
}
