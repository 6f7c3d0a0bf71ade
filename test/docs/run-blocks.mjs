// Runs doc blocks one after another in this process (under tsx, with the docs project's
// tsconfig paths) and writes what became of each to a JSON file: "ok", or the error. One process
// for all keeps the docs test fast; a block still running after RUN_LIMIT_MS is reported as such.
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const RUN_LIMIT_MS = 10_000;
const [resultsFile, ...files] = process.argv.slice(2);
const results = {};
let current;

// A rejection nobody handled belongs to the block that was running.
process.on('unhandledRejection', (reason) => {
  if (current !== undefined && results[current] === undefined) results[current] = describe(reason);
});

for (const file of files) {
  current = file;
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${RUN_LIMIT_MS / 1000} s`)), RUN_LIMIT_MS);
  });
  try {
    await Promise.race([import(pathToFileURL(file).href), limit]);
    results[file] ??= 'ok';
  } catch (error) {
    results[file] ??= describe(error);
  } finally {
    clearTimeout(timer);
  }
}
writeFileSync(resultsFile, JSON.stringify(results));
process.exit(0);

function describe(error) {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
