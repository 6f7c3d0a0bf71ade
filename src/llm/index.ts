/**
 * What every provider shares, with none of the adapters' client libraries: model specs as the
 * command line reads them, key rings, cassettes and the provider contract
 * (`import { resolveModel } from 'troupe/providers'`). Each adapter has a subpath of its own.
 */
export { resolveModel, OLLAMA_BASE_URL } from './resolve-model.js';
export type { AdapterLoader, AdapterName, ResolveModelOptions } from './resolve-model.js';
export { KeyRing } from './key-ring.js';
export type { AdapterOptions } from './adapter-options.js';
export { ProviderError } from './provider-error.js';
export { scriptedProvider } from './scripted-provider.js';
export type { ScriptedProvider, ScriptedProviderOptions, ScriptedReply, ScriptFunction } from './scripted-provider.js';
export { cassetteProvider, recordProvider, CASSETTE_VERSION } from './cassette.js';
export type { CassetteEntry, CassetteProvider, RecordOptions } from './cassette.js';
export { costOf, DEFAULT_PRICES, priceFor, PRICES_TAKEN, type ModelPrice, type PriceTable } from './prices.js';
export type * from './types.js';
