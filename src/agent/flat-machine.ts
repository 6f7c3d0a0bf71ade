import type { AnyStateMachine } from 'xstate';

/**
 * A flat XState machine compiled to a transition table, for stepping many agents cheaply.
 *
 * XState's interpreter costs 4–10 µs per microstep here (entry/exit sets, snapshot copies,
 * eventless checks), and an agent run takes eight: most of a run's time. The agent machine uses
 * only flat states with entry actions, `on` and `always` transitions with named guards and
 * actions, so this table, read from the machine's own config and implementations, gives the same
 * transitions and the same action order (a conformance test checks it against XState's
 * `machine.transition` for every state, event and guard outcome). Anything richer — nested or
 * parallel states, exit actions, invocations, delays, self-transitions — is refused when compiling,
 * so the machine cannot grow past what this stepper understands without failing loudly.
 */

type ActionArgs<TContext> = { context: TContext; event: { type: string } };
type ActionImplementation<TContext> = (args: ActionArgs<TContext>, params: unknown) => void;
type GuardImplementation<TContext> = (args: ActionArgs<TContext>) => boolean;

type ActionRef<TContext> = { run: ActionImplementation<TContext>; params: unknown };
type Transition<TContext> = {
  target: string;
  guard: GuardImplementation<TContext> | undefined;
  actions: ActionRef<TContext>[];
};
type State<TContext> = {
  entry: ActionRef<TContext>[];
  on: Map<string, Transition<TContext>[]>;
  always: Transition<TContext>[];
};

/** A compiled flat machine: its initial state and a step function. */
export type FlatMachine<TContext> = {
  readonly initial: string;
  readonly states: ReadonlySet<string>;
  /** Enters the initial state (entry actions, then eventless transitions) and returns the state reached. */
  start(context: TContext): string;
  /**
   * Takes one event in `state`; returns the state reached after eventless transitions. As in
   * XState, eventless transitions are checked after every event, handled or not.
   */
  step(state: string, event: { type: string }, context: TContext): string;
};

// An eventless loop longer than this is a bug in the machine, not a run to wait for.
const MAX_EVENTLESS_STEPS = 100;

const SUPPORTED_STATE_KEYS = new Set(['entry', 'on', 'always']);

/** Compiles a flat machine; throws on any construct the stepper does not implement. */
export function compileFlatMachine<TContext>(machine: AnyStateMachine): FlatMachine<TContext> {
  const config = machine.config as { initial?: unknown; states?: Record<string, Record<string, unknown>> };
  const { actions = {}, guards = {} } = machine.implementations as {
    actions?: Record<string, unknown>;
    guards?: Record<string, unknown>;
  };
  const fail = (message: string): never => {
    throw new Error(`compileFlatMachine(${machine.id}): ${message}`);
  };
  if (typeof config.initial !== 'string' || config.states === undefined) fail('needs `initial` and `states`');
  const names = new Set(Object.keys(config.states!));

  const action = (ref: unknown): ActionRef<TContext> => {
    const { type, params } = typeof ref === 'string' ? { type: ref, params: undefined } : (ref as { type?: unknown; params?: unknown });
    const run = typeof type === 'string' ? actions[type] : undefined;
    if (typeof run !== 'function') fail(`action ${JSON.stringify(type)} is not a named, implemented action`);
    return { run: run as ActionImplementation<TContext>, params };
  };
  const list = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
  const transition = (from: string, value: unknown): Transition<TContext> => {
    const spec = typeof value === 'string' ? { target: value } : (value as Record<string, unknown>);
    for (const key of Object.keys(spec)) if (!['target', 'guard', 'actions'].includes(key)) fail(`${from}: transition key "${key}"`);
    const target = spec.target;
    if (typeof target !== 'string' || !names.has(target)) fail(`${from}: target ${JSON.stringify(target)} is not a sibling state`);
    if (target === from) fail(`${from}: self-transitions re-enter in XState and are not supported`);
    let guard: GuardImplementation<TContext> | undefined;
    if (spec.guard !== undefined) {
      const implementation = typeof spec.guard === 'string' ? guards[spec.guard] : undefined;
      if (typeof implementation !== 'function') fail(`${from}: guard ${JSON.stringify(spec.guard)} is not a named, implemented guard`);
      guard = implementation as GuardImplementation<TContext>;
    }
    return { target: target as string, guard, actions: list(spec.actions).map(action) };
  };

  const states = new Map<string, State<TContext>>();
  for (const [name, node] of Object.entries(config.states!)) {
    for (const key of Object.keys(node)) if (!SUPPORTED_STATE_KEYS.has(key)) fail(`state ${name}: "${key}" is not supported`);
    const on = new Map<string, Transition<TContext>[]>();
    for (const [type, targets] of Object.entries((node.on ?? {}) as Record<string, unknown>)) {
      on.set(type, list(targets).map((value) => transition(name, value)));
    }
    states.set(name, { entry: list(node.entry).map(action), on, always: list(node.always).map((value) => transition(name, value)) });
  }

  // Indexed loops on every step: a `for…of` the engine does not inline allocates an iterator
  // result per item, and `find` a closure per step.
  const runAll = (refs: readonly ActionRef<TContext>[], args: ActionArgs<TContext>): void => {
    for (let index = 0; index < refs.length; index++) refs[index]!.run(args, refs[index]!.params);
  };
  const enter = (name: string, args: ActionArgs<TContext>): string => {
    runAll(states.get(name)!.entry, args);
    return name;
  };
  const choose = (candidates: readonly Transition<TContext>[] | undefined, args: ActionArgs<TContext>) => {
    if (candidates === undefined) return undefined;
    for (let index = 0; index < candidates.length; index++) {
      const candidate = candidates[index]!;
      if (candidate.guard === undefined || candidate.guard(args)) return candidate;
    }
    return undefined;
  };
  const take = (chosen: Transition<TContext>, args: ActionArgs<TContext>): string => {
    runAll(chosen.actions, args);
    return enter(chosen.target, args);
  };

  // Named after XState's `always`: in troupe's glossary "settle" is async work coming back, not this.
  const takeAlways = (from: string, args: ActionArgs<TContext>): string => {
    let current = from;
    for (let steps = 0; ; steps++) {
      const next = choose(states.get(current)!.always, args);
      if (next === undefined) return current;
      if (steps === MAX_EVENTLESS_STEPS) fail(`eventless transitions loop from "${current}"`);
      current = take(next, args);
    }
  };

  return {
    initial: config.initial as string,
    states: names,
    start(context) {
      const args = { context, event: { type: 'xstate.init' } };
      return takeAlways(enter(config.initial as string, args), args);
    },
    step(state, event, context) {
      const args = { context, event };
      const chosen = choose(states.get(state)?.on.get(event.type), args);
      return takeAlways(chosen === undefined ? state : take(chosen, args), args);
    },
  };
}
