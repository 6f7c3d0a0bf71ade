import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRunFlags } from '../../src/cli/run-flags.js';
import { splitCommand } from '../../src/cli/split-command.js';
import { isAlive, SERVERS } from '../mcp/helpers.js';
import { BROKEN, jsonLines, troupe } from './helpers.js';

const SHIPPED = new URL('../../scenes/', import.meta.url);

/** A `--mcp` command for the quirky fixture server; quoted, as a user would type a path with spaces. */
const QUIRKY = `"${process.execPath}" "${SERVERS.quirky}"`;

/** A file the quirky servers write their pids to (the environment reaches them through --mcp). */
function pidFile(): { env: Record<string, string>; pids: () => number[] } {
  const path = join(mkdtempSync(join(tmpdir(), 'troupe-cli-mcp-')), 'pids');
  return { env: { QUIRKY_PIDFILE: path }, pids: () => readFileSync(path, 'utf8').trim().split('\n').map(Number) };
}

describe('splitCommand', () => {
  it.each([
    ['npx -y @modelcontextprotocol/server-memory', ['npx', '-y', '@modelcontextprotocol/server-memory']],
    [`  node  'my server.js'   --root "/srv/my notes"  `, ['node', 'my server.js', '--root', '/srv/my notes']],
    [`say "a \\"quoted\\" \\$word" it\\'s`, ['say', 'a "quoted" $word', "it's"]],
    [`x "" ''`, ['x', '', '']],
    ['echo $HOME ~ *.txt', ['echo', '$HOME', '~', '*.txt']],
    [`a'b'"c"d`, ['abcd']],
  ])('splits %j', (text, words) => {
    expect(splitCommand(text)).toEqual({ ok: true, value: words });
  });

  it.each([
    [`node 'open`, "unclosed '"],
    ['node "open', 'unclosed "'],
    ['node x \\', 'a \\ ends'],
    ['server | tee log', '"|" in'],
    ['a && b', '"&" in'],
    ['   ', 'the command is empty'],
  ])('refuses %j', (text, problem) => {
    expect(splitCommand(text)).toEqual({ ok: false, problem: expect.stringContaining(problem) });
  });
});

describe('troupe run --mcp', { timeout: 30_000 }, () => {
  it('parses repeated --mcp flags into commands, and says what is wrong with one', () => {
    expect(parseRunFlags(['talk', '--mcp', 'a b', '--mcp', `c 'd e'`])).toMatchObject({ ok: true, value: { mcp: [['a', 'b'], ['c', 'd e']] } });
    expect(parseRunFlags(['talk'])).toMatchObject({ ok: true, value: { mcp: [] } });
    expect(parseRunFlags(['talk', '--mcp', 'x | y'])).toEqual({
      ok: false,
      problem: expect.stringMatching(/^--mcp needs the command that starts an MCP server, e\.g\. --mcp "npx -y @modelcontextprotocol\/server-memory": "\|" in/),
    });
  });

  it('gives every member the server\'s tools, and ends the server with the run', async () => {
    const { env, pids } = pidFile();
    const { code, out } = await troupe(['run', 'quickstart', '--json', '--seed', '1', '--mcp', QUIRKY, '--mcp', `node ${SERVERS.memory}`], { scenesDir: SHIPPED, env });
    expect(code).toBe(0);
    const spawned = jsonLines(out).find((event) => event.type === 'agent.spawned')!;
    expect(spawned.data['tools']).toEqual(expect.arrayContaining(['quirky__pid', 'quirky__shapes_area', 'memory-server__read_graph', 'check_stock', 'give_item']));
    const [pid] = pids();
    expect(isAlive(pid!)).toBe(false);
  });

  it.each([['tavern'], ['market'], ['crowd', '--npcs', '2']])('the shipped scene %s passes the tools to every member', async (name, ...flags) => {
    const { env } = pidFile();
    const { code, out } = await troupe(['run', name, ...flags, '--ticks', '1', '--json', '--mcp', QUIRKY], { scenesDir: SHIPPED, env });
    expect(code).toBe(0);
    const spawned = jsonLines(out).filter((event) => event.type === 'agent.spawned');
    expect(spawned.length).toBeGreaterThan(1);
    expect(spawned.every((event) => (event.data['tools'] as string[]).includes('quirky__pid'))).toBe(true);
  });

  it('keeps two servers\' tools apart when they share a name', async () => {
    const { env, pids } = pidFile();
    const { code, out } = await troupe(['run', 'quickstart', '--json', '--mcp', QUIRKY, '--mcp', QUIRKY], { scenesDir: SHIPPED, env });
    expect(code).toBe(0);
    const tools = jsonLines(out).find((event) => event.type === 'agent.spawned')!.data['tools'] as string[];
    expect(tools).toEqual(expect.arrayContaining(['quirky__pid', 'quirky__pid_2']));
    expect(pids()).toHaveLength(2);
    expect(pids().some(isAlive)).toBe(false);
  });

  it('names the package to install, in one line, when the MCP SDK is missing', async () => {
    // The import fails the way it does on a host without the SDK.
    const missing = 'troupe-test-not-installed-mcp';
    const loadMcp = async () => (await import(missing)) as never;
    const { code, err } = await troupe(['run', 'quickstart', '--mcp', 'anything'], { scenesDir: SHIPPED, loadMcp });
    expect(code).toBe(2);
    expect(err).toBe("troupe: --mcp needs the @modelcontextprotocol/sdk package: npm install @modelcontextprotocol/sdk@1 (cannot find package 'troupe-test-not-installed-mcp')\n");
  });

  it('fails clearly when a server cannot start, closing those that did', async () => {
    const { env, pids } = pidFile();
    const { code, err } = await troupe(['run', 'quickstart', '--mcp', QUIRKY, '--mcp', 'troupe-no-such-server --flag'], { scenesDir: SHIPPED, env });
    expect(code).toBe(1);
    expect(err).toContain('troupe: --mcp "troupe-no-such-server --flag": cannot connect to MCP server "troupe-no-such-server": spawn troupe-no-such-server ENOENT');
    expect(isAlive(pids()[0]!)).toBe(false);
  });

  it('ends the servers on Ctrl-C and when the scene fails', async () => {
    const interrupted = pidFile();
    const stopped = await troupe(['run', 'quickstart', '--quiet', '--mcp', QUIRKY], {
      scenesDir: SHIPPED,
      env: interrupted.env,
      // Ctrl-C as soon as the run listens for it.
      interrupts: (listener) => (queueMicrotask(listener), () => undefined),
    });
    expect(stopped.code).toBe(130);
    expect(isAlive(interrupted.pids()[0]!)).toBe(false);

    for (const broken of ['flooded', 'run-throws']) {
      const { env, pids } = pidFile();
      const failed = await troupe(['run', broken, '--mcp', QUIRKY], { scenesDir: BROKEN, env });
      expect(failed.code).toBe(1);
      expect(isAlive(pids()[0]!)).toBe(false);
    }
  });
});
