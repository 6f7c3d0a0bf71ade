// @ts-check
/** A `<select>` of "everyone" plus each agent, kept in step with the agents the model knows. */
import { el } from './dom.js';

/**
 * Adds options for agents the select does not list yet (agents only ever join a scene).
 *
 * @param {HTMLSelectElement} select
 * @param {Iterable<string>} agents
 */
export function syncAgentOptions(select, agents) {
  const listed = new Set(Array.from(select.options, (option) => option.value));
  for (const name of agents) {
    if (!listed.has(name)) select.append(el('option', { text: name, attrs: { value: name } }));
  }
}

