/** The event bus and its companions: `import { createBus, patternMatcher } from 'troupe/bus'`. */
export { createBus } from './bus.js';
export type { Bus, BusOptions, EventFilter, EventMeta, Publish, Unsubscribe } from './bus.js';
export { CATALOGUE_VERSION } from './events.js';
export type { AgentStateName, Envelope, EnvelopeOf, EventType, Pattern, TroupeEvents, TypesUnder } from './events.js';
export type * from './event-data.js';
export { safeJson, serializeEnvelope } from './serialize-event.js';
export { createBufferedDelivery, createEventQueue, SAMPLED_TYPES, subscribeBuffered } from './backpressure.js';
export type {
  Backpressure,
  BackpressurePolicy,
  BufferedDelivery,
  BufferedHandler,
  BufferedOptions,
  BufferedSubscription,
  Delivery,
  DeliveryHooks,
  EventQueue,
  Overflow,
} from './backpressure.js';
export { patternMatcher } from './pattern-match.js';
export { randomIds, sequentialIds, steppedClock } from './ids.js';
export type { Clock, IdSource } from './ids.js';
