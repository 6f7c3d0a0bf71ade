/**
 * Which tools are skills (`defineSkill`): the manifest lists them apart from plain tools. A mark
 * beside the tool rather than a field on it, so a skill stays an ordinary `Tool` everywhere else.
 */
const SKILLS = new WeakSet<object>();

/** Marks `tool` as a skill and returns it. */
export function markSkill<T extends object>(tool: T): T {
  SKILLS.add(tool);
  return tool;
}

/** Whether `tool` was made by `defineSkill`. */
export function isSkill(tool: object): boolean {
  return SKILLS.has(tool);
}
