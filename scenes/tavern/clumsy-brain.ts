import type { Brain, Perception } from '../../src/index.js';
import { call } from './action-text.js';
import { pick } from './listen.js';
import { patron } from './patron-brain.js';
import { patronOf } from './world.js';

/**
 * Pip: a patron whose brain writes what a careless model writes. His first three orders each
 * carry one classic mistake; the runtime runs nothing, answers with an observation, and in the
 * same turn (he has `rounds: 2`) he reads it and sends the block again, fixed. After that he is
 * an ordinary patron. Every fix comes from the observation's text, not from knowing the answer.
 */

/** The mistakes, in order: what he writes, and how the intended call looked. */
const BLUNDERS = [
  // A wrong parameter name: the schema says `item`.
  { text: 'Innkeeper! Ale for Pip!', write: '<ACTION><order><drink>ale</drink></order></ACTION>' },
  // An unclosed block: nothing runs until `</ACTION>` is there.
  { text: 'And some bread, if you please.', write: '<ACTION><order><item>bread</item></order>' },
  // A tool that does not exist: the observation lists the ones that do.
  { text: 'Another round!', write: '<ACTION><buy_drink><item>ale</item></buy_drink></ACTION>' },
] as const;

/** What the runtime's observation says, and the fix each problem calls for. */
const FIXES: readonly { problem: RegExp; fix: (attempt: string, match: RegExpMatchArray) => string; remark: (match: RegExpMatchArray) => string }[] = [
  {
    problem: /Unknown parameter "(\w+)"\. Allowed: (\w+)/,
    fix: (attempt, [, wrong, right]) => attempt.replaceAll(`<${wrong}>`, `<${right}>`).replaceAll(`</${wrong}>`, `</${right}>`),
    remark: ([, wrong, right]) => `Oh! It's "${right}", not "${wrong}". Again:`,
  },
  {
    problem: /\(unclosed_action\)/,
    fix: (attempt) => `${attempt}</ACTION>`,
    remark: () => 'Oops, forgot to close that. Again:',
  },
  {
    // He wanted to buy something: of the tools the observation lists, `order` is the one for that.
    problem: /Unknown tool "(\w+)"\. Available tools: [^.]*\border\b/,
    fix: (attempt, [, wrong]) => attempt.replaceAll(`<${wrong}>`, '<order>').replaceAll(`</${wrong}>`, '</order>'),
    remark: ([, wrong]) => `No "${wrong}" here, it's "order". Again:`,
  },
];

/** The clumsy patron's brain. */
export const clumsy: Brain = (perception) => {
  const lessons = (perception.private.lessons as number | undefined) ?? 0;
  const blunder = BLUNDERS[lessons];
  const present = patronOf(perception.world, perception.agent)?.status === 'in';
  if (blunder !== undefined && present && perception.trigger.reason === 'timer') {
    if (perception.round === 1) return `${blunder.text}\n${blunder.write}`;
    return correct(perception, blunder.write, lessons);
  }
  // Round 2 after an ordinary action: what went wrong gets handled next turn; otherwise a word.
  if (perception.round === 2) {
    const last = perception.observation?.calls[0];
    if (last?.name === 'leave') return '*hums all the way home*';
    if (last?.name === 'wait') return 'Zzz...';
    return perception.observation?.ok === false ? 'Hm.' : pick(perception, ['Hehe.', 'Lovely.', 'Where was I?']);
  }
  return patron(perception);
};

/** Round 2 of a blunder turn: find the problem in the observation, fix the attempt, note the lesson. */
function correct(perception: Perception, attempt: string, lessons: number): string {
  const observation = perception.observation;
  if (observation === undefined || observation.ok) return 'Huh. That worked?';
  for (const { problem, fix, remark } of FIXES) {
    const match = observation.text.match(problem);
    if (match === null) continue;
    const fixed = fix(attempt, match);
    // The lesson goes in the same block, so it is remembered only if the block is read.
    const note = call('update_private', { key: 'lessons', value: lessons + 1 });
    return `${remark(match)}\n${fixed.replace(/<\/ACTION>$/, `${note}</ACTION>`)}`;
  }
  return "I don't understand what I did wrong.";
}
