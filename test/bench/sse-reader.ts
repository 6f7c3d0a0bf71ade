import { request } from 'node:http';

/**
 * A page reading the inspector's `/events`, as a browser would: in its own process. Run with
 * `fork(this file, [port, token])`; it reads every frame, checks that the ids run on without a
 * hole, and tells its parent how far it got after each chunk (`ReaderProgress`).
 */
export type ReaderProgress = { frames: number; first: number; last: number; contiguous: boolean; dropped: boolean };

const ID_LINE = '\nid: crowd-';

function read(port: number, token: string): void {
  const state: ReaderProgress = { frames: 0, first: 0, last: 0, contiguous: true, dropped: false };
  const report = (): void => void process.send?.(state);
  const req = request({ host: '127.0.0.1', port, path: '/events', agent: false, headers: { host: `127.0.0.1:${port}`, 'x-troupe-token': token } }, (res) => {
    if (res.statusCode !== 200) {
      state.dropped = true;
      report();
      res.resume();
      return;
    }
    res.setEncoding('utf8');
    // A frame is `id: crowd-N\nevent: troupe\ndata: {…}\n\n`; its data never holds a raw line break.
    let carry = '';
    res.on('data', (chunk: string) => {
      const text = carry + chunk;
      let done = 0;
      for (let at = text.indexOf(ID_LINE); at !== -1; at = text.indexOf(ID_LINE, done)) {
        const end = text.indexOf('\n', at + ID_LINE.length);
        if (end === -1) break;
        const id = Number(text.slice(at + ID_LINE.length, end));
        if (state.frames === 0) state.first = id;
        else if (id !== state.last + 1) state.contiguous = false;
        state.last = id;
        state.frames++;
        done = end;
      }
      // Keep the tail that may hold the start of an id line cut by the chunk's end.
      carry = text.slice(Math.max(done, text.length - 64));
      report();
    });
    res.on('close', () => {
      state.dropped ||= !res.complete;
      report();
    });
  });
  req.on('error', () => {
    state.dropped = true;
    report();
  });
  req.end();
  process.on('disconnect', () => req.destroy());
}

if (process.send !== undefined && process.argv.length >= 4) read(Number(process.argv[2]), process.argv[3]!);
