import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    // Two cores here and in CI: threads beat forks for many small suites.
    pool: 'threads',
    testTimeout: 20_000,
    // Type tests (*.test-d.ts) are checked by `npm run typecheck` (tsc covers test/).
  },
});
