// A tiny server for index.html: GET / serves the page, GET /chat?q=… streams an agent's answer to
// the question as Server-Sent Events (agent.stream(q).toSSEResponse()). Run it, then open the URL:
//   npx tsx docs/examples/stream-page/server.ts      (PORT=8080 to choose the port)
// The model is scripted, so it runs offline; give the agent a real provider to ask a real model.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAgent, defineTool, scriptedProvider } from 'troupe';

const page = readFileSync(new URL('index.html', import.meta.url));
const players: Record<string, { name: string; team: string }> = { '7': { name: 'Ana', team: 'red' }, '9': { name: 'Bo', team: 'blue' } };

const lookupPlayer = defineTool({
  name: 'lookup_player',
  description: 'Find a player by id.',
  parameters: { type: 'object', properties: { id: { type: 'string', maxLength: 16 } }, required: ['id'] },
  readOnly: true,
  execute: ({ id }) => players[id] ?? null,
});

/** A scripted referee: looks up the player the question names, then answers, a few letters at a time. */
const referee = scriptedProvider(
  (request) => {
    // The question is the first user message; later ones are the observations of its calls.
    const question = request.messages.find((message) => message.role === 'user')?.content ?? '';
    const id = /\d+/.exec(question)?.[0] ?? '7';
    if (request.round === 1) return `Let me look up player ${id}. <ACTION><lookup_player><id>${id}</id></lookup_player></ACTION>`;
    const player = players[id];
    return player === undefined ? `There is no player ${id}.` : `Player ${id} is ${player.name}, on the ${player.team} team.`;
  },
  { stream: { chunkSize: 4 } },
);

const server = createServer((request, reply) => {
  const url = new URL(request.url ?? '/', 'http://localhost');
  if (url.pathname === '/') return void reply.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
  if (url.pathname !== '/chat') return void reply.writeHead(404).end();
  // One agent per request: an agent runs one run at a time.
  const agent = createAgent({ name: 'referee', tools: [lookupPlayer], provider: referee });
  const hangUp = new AbortController();
  reply.on('close', () => hangUp.abort()); // the page went away: stop the run
  const response = agent.stream(url.searchParams.get('q') ?? '', { signal: hangUp.signal }).toSSEResponse();
  reply.writeHead(response.status, Object.fromEntries(response.headers));
  void (async () => {
    for await (const chunk of response.body!) reply.write(chunk);
    reply.end();
  })().finally(() => void agent.close());
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
});
