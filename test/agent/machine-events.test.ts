import { describe, expect, it } from 'vitest';
import { agentMachine } from '../../machines/agent.machine.js';
import { EVENTS, STATE_CHANGES } from '../../src/agent/machine-events.js';

// machine-events.ts lists the machine's events and states by hand behind a cast: these tests hold
// the lists to the machine itself, so neither can drift from it.
const MACHINE_EVENTS = [...agentMachine.events].sort();
const MACHINE_STATES = Object.keys(agentMachine.config.states ?? {}).sort();

describe('the machine events and state changes made once', () => {
  it('has one frozen event for exactly each event the machine takes', () => {
    expect(Object.keys(EVENTS).sort()).toEqual(MACHINE_EVENTS);
    for (const [type, event] of Object.entries(EVENTS)) {
      expect(event).toEqual({ type });
      expect(Object.isFrozen(event)).toBe(true);
    }
    expect(Object.isFrozen(EVENTS)).toBe(true);
  });

  it('has one frozen agent.state payload for exactly each pair of the machine states', () => {
    expect(Object.keys(STATE_CHANGES).sort()).toEqual(MACHINE_STATES);
    for (const [from, changes] of Object.entries(STATE_CHANGES)) {
      expect(Object.keys(changes).sort()).toEqual(MACHINE_STATES);
      for (const [to, change] of Object.entries(changes)) {
        expect(change).toEqual({ from, to });
        expect(Object.isFrozen(change)).toBe(true);
      }
      expect(Object.isFrozen(changes)).toBe(true);
    }
  });
});
