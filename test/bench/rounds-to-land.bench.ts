import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { DEFAULT_LIMITS, type RawCall } from '../../src/protocol/index.js';
import { createRegistry } from '../../src/tools/registry.js';
import { validateCalls } from '../../src/tools/validate-calls.js';
import type { Tool } from '../../src/tools/types.js';
import { pickAcceptable, registerFunction } from '../protocol/corpora-mapping.js';
import type { Row } from './measure.js';

/**
 * Rounds a correcting model needs to land a call with several wrong arguments, when a rejection
 * names only the first issue (`maxIssues: 1`, as before) and when it names each (the default).
 * The calls are BFCL ground-truth calls with three arguments given values of the wrong type; the
 * stand-in model reads the rejection and fixes exactly the parameters its issues name, as a model
 * that follows the observation would. Not a timing: the row's "µs/op" column is the mean rounds.
 */

type BfclRow = { functions: { name: string; description?: string; parameters?: unknown }[]; ground_truth: Array<Record<string, Record<string, unknown>>> | null; expected_behavior: string };

const CORPUS = new URL('../../../test/protocol/corpora/bfcl_v4_single_turn.jsonl.gz', import.meta.url);
const WRONG = 3;

export function benchRoundsToLand(): Row[] {
  const cases = mutatedCalls();
  return [1, DEFAULT_LIMITS.maxIssues].map((maxIssues) => {
    let rounds = 0;
    let landed = 0;
    for (const { tool, good, bad } of cases) {
      const result = roundsToLand(tool, good, bad, maxIssues);
      if (result !== undefined) {
        landed++;
        rounds += result;
      }
    }
    return {
      name: `rounds to land a BFCL call with ${WRONG} wrong arguments, maxIssues ${maxIssues}`,
      iterations: cases.length,
      usPerOp: rounds / landed,
      note: `mean rounds (not µs); ${landed} of ${cases.length} landed within 10`,
    };
  });
}

/** Rounds until the call validates: each round the model fixes what the rejection named. */
function roundsToLand(tool: Tool, good: Record<string, unknown>, bad: Record<string, unknown>, maxIssues: number): number | undefined {
  const registry = createRegistry([tool]);
  const args = { ...bad };
  for (let round = 1; round <= 10; round++) {
    const call: RawCall = { format: 'native', callId: 'c', name: tool.name, argumentsText: JSON.stringify(args) };
    const outcome = validateCalls([call], { registry, limits: { ...DEFAULT_LIMITS, maxIssues } });
    if (outcome.ok) return round;
    if (outcome.problem.kind !== 'rejected') return undefined;
    let fixed = 0;
    for (const issue of outcome.problem.rejection.issues) {
      const name = (issue.path ?? '').split('/')[1] ?? issue.property;
      if (name !== undefined && Object.hasOwn(good, name) && args[name] !== good[name]) {
        args[name] = good[name];
        fixed++;
      }
    }
    if (fixed === 0) return undefined;
  }
  return undefined;
}

/** Ground-truth calls of registered tools with at least three arguments, three of them made the wrong type. */
function mutatedCalls(): { tool: Tool; good: Record<string, unknown>; bad: Record<string, unknown> }[] {
  const rows = gunzipSync(readFileSync(CORPUS)).toString('utf8').split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as BfclRow);
  const cases: { tool: Tool; good: Record<string, unknown>; bad: Record<string, unknown> }[] = [];
  for (const row of rows) {
    if (row.expected_behavior !== 'call' || row.ground_truth?.length !== 1) continue;
    const [name, params] = Object.entries(row.ground_truth[0]!)[0]!;
    const definition = row.functions.find((candidate) => candidate.name === name);
    if (definition === undefined) continue;
    const registration = registerFunction(definition);
    if (!registration.ok) continue;
    const good: Record<string, unknown> = {};
    for (const [param, values] of Object.entries(params)) {
      const picked = pickAcceptable(values);
      if (picked !== undefined) good[param] = picked.value;
    }
    const names = Object.keys(good);
    if (names.length < WRONG) continue;
    const check = validateCalls([{ format: 'native', callId: 'c', name: registration.tool.name, argumentsText: JSON.stringify(good) }], { registry: createRegistry([registration.tool]), limits: DEFAULT_LIMITS });
    if (!check.ok) continue;
    const bad = { ...good };
    for (const param of names.slice(0, WRONG)) bad[param] = wrongType(good[param]);
    cases.push({ tool: registration.tool, good, bad });
  }
  return cases;
}

/** A value of another JSON type than `value`. */
function wrongType(value: unknown): unknown {
  if (typeof value === 'string') return { wrong: true };
  if (typeof value === 'number' || typeof value === 'boolean') return 'not a number';
  return 12345;
}
