export * from './bus.js';
export * from './events.js';
export * from './ids.js';
