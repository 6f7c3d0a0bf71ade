import { createActor, type AnyActorScope, type AnyStateMachine } from 'xstate';

/** What `machine.transition` needs to run a machine's actions: one per machine, shared by agents. */
export type MachineScope = AnyActorScope;

const scopes = new WeakMap<AnyStateMachine, MachineScope>();

/**
 * An actor scope that executes each action as the transition reaches it, as a running XState actor
 * does, without an actor per agent. Our actions and guards reach their agent through the context;
 * they never use `self`, `system` or delayed events, which this scope does not provide.
 */
export function machineScope(machine: AnyStateMachine): MachineScope {
  let scope = scopes.get(machine);
  if (scope === undefined) {
    // An inert actor lends the scope its identity; it is never started.
    const inert = createActor(machine, { input: { host: {} } });
    scope = {
      self: inert,
      id: 'troupe-agent',
      sessionId: 'troupe-agent',
      logger: () => {},
      defer: () => {},
      emit: () => {},
      stopChild: () => {},
      system: inert.system,
      actionExecutor: (action) => {
        action.exec?.(action.info, action.params);
      },
    } as MachineScope;
    scopes.set(machine, scope);
  }
  return scope;
}
