import { failure, success, type Outcome } from '../outcome.js';
import type { SceneOptionSpec, SceneOptionValues } from '../scene/define-scene.js';

/** What node:util parseArgs takes for one option. */
export type ArgOption = { type: 'string' | 'boolean'; short?: string; multiple?: boolean };

/** A scene's options as parseArgs options: values are read as text and checked by `sceneOptionValues`. */
export function sceneArgOptions(specs: Readonly<Record<string, SceneOptionSpec>>): Record<string, ArgOption> {
  const options: Record<string, ArgOption> = {};
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.type === 'boolean') {
      options[name] = { type: 'boolean' };
      // parseArgs learned `--no-` negation only in Node 22; a default-true switch needs its own off flag.
      if (!(`no-${name}` in specs)) options[`no-${name}`] = { type: 'boolean' };
    } else {
      options[name] = { type: 'string' };
    }
  }
  return options;
}

/**
 * The scene's option values: each given flag checked against its spec (type, integer, min/max,
 * choices), defaults for the rest. A problem names the flag and what it allows.
 */
export function sceneOptionValues(
  specs: Readonly<Record<string, SceneOptionSpec>>,
  given: Readonly<Record<string, string | boolean | undefined>>,
): Outcome<SceneOptionValues, string> {
  const values: SceneOptionValues = {};
  for (const [name, spec] of Object.entries(specs)) {
    const raw = given[name];
    if (spec.type === 'boolean') {
      const negated = !(`no-${name}` in specs) && given[`no-${name}`] === true;
      values[name] = negated ? false : raw === true || spec.default;
      continue;
    }
    if (raw === undefined || typeof raw === 'boolean') {
      values[name] = spec.default;
      continue;
    }
    if (spec.type === 'string') {
      if (spec.choices !== undefined && !spec.choices.includes(raw)) {
        return failure(`--${name} must be one of ${spec.choices.join(', ')}; got ${JSON.stringify(raw)}`);
      }
      values[name] = raw;
      continue;
    }
    const number = raw.trim() === '' ? Number.NaN : Number(raw);
    if (!Number.isFinite(number) || (spec.integer === true && !Number.isSafeInteger(number)) || (spec.min !== undefined && number < spec.min) || (spec.max !== undefined && number > spec.max)) {
      return failure(`--${name} must be ${allowedNumbers(spec)}; got ${JSON.stringify(raw)}`);
    }
    values[name] = number;
  }
  return success(values);
}

/**
 * One help line per option: `--npcs <integer>  how many NPCs (default 3; 1 to 1000)`.
 *
 * @example
 * describeSceneOptions({ npcs: { type: 'number', integer: true, min: 1, default: 3, description: 'NPCs' } });
 * // ['--npcs <integer>  NPCs (default 3; >= 1)']
 */
export function describeSceneOptions(specs: Readonly<Record<string, SceneOptionSpec>>): string[] {
  const rows = Object.entries(specs).map(([name, spec]): [string, string] => {
    switch (spec.type) {
      case 'boolean':
        return [`--${name}${spec.default ? ` / --no-${name}` : ''}`, `${spec.description} (default ${spec.default ? 'on' : 'off'})`];
      case 'string':
        return [`--${name} <${spec.choices?.join('|') ?? 'text'}>`, `${spec.description} (default ${JSON.stringify(spec.default)})`];
      case 'number': {
        const range = numberRange(spec);
        return [`--${name} <${spec.integer === true ? 'integer' : 'number'}>`, `${spec.description} (default ${spec.default}${range === '' ? '' : `; ${range}`})`];
      }
    }
  });
  const width = Math.max(0, ...rows.map(([flag]) => flag.length));
  return rows.map(([flag, text]) => `${flag.padEnd(width)}  ${text}`);
}

type NumberSpec = Extract<SceneOptionSpec, { type: 'number' }>;

function allowedNumbers(spec: NumberSpec): string {
  const range = numberRange(spec);
  return `${spec.integer === true ? 'an integer' : 'a number'}${range === '' ? '' : ` ${range}`}`;
}

function numberRange(spec: NumberSpec): string {
  if (spec.min !== undefined && spec.max !== undefined) return `from ${spec.min} to ${spec.max}`;
  if (spec.min !== undefined) return `>= ${spec.min}`;
  if (spec.max !== undefined) return `<= ${spec.max}`;
  return '';
}
