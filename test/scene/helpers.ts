import { createScene, defineTool, type Envelope, type Scene, type SceneOptions } from '../../src/index.js';

/** A stepped scene with every event recorded in order. */
export function recordedScene(options: Partial<SceneOptions> = {}): { scene: Scene; events: Envelope[]; types: () => string[] } {
  const scene = createScene({ name: 'test', seed: 1, ...options });
  const events: Envelope[] = [];
  scene.bus.on('*', (event) => void events.push(event));
  return { scene, events, types: () => events.map((event) => event.type) };
}

/** The `<ACTION>` text for one call, as a brain writes it. */
export function act(tool: string, args: Record<string, string | number> = {}): string {
  const inner = Object.entries(args)
    .map(([key, value]) => `<${key}>${value}</${key}>`)
    .join('');
  return `<ACTION><${tool}>${inner}</${tool}></ACTION>`;
}

/** The events of one type, narrowed. */
export function ofType<T extends Envelope['type']>(events: readonly Envelope[], type: T): Envelope<T>[] {
  return events.filter((event) => event.type === type) as Envelope<T>[];
}

/** A tool that does nothing but count its calls. */
export function noteTool(name = 'note') {
  const calls: string[] = [];
  const tool = defineTool({
    name,
    description: 'Write a note.',
    parameters: { type: 'object', properties: { text: { type: 'string', maxLength: 200 } }, required: ['text'] },
    execute: ({ text }, { agent }) => {
      calls.push(`${agent}:${String(text)}`);
      return 'noted';
    },
  });
  return { tool, calls };
}
