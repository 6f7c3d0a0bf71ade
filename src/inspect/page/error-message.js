// @ts-check

/**
 * The message of anything thrown: an Error's message, else the value as text.
 * @param {unknown} error
 * @returns {string}
 */
export function errorMessage(error) {
  return error instanceof Error ? error.message : String(error);
}
