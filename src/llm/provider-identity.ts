import type { Provider } from './types.js';

/**
 * What a provider that wraps another says of itself: the wrapped one's name, model and what it
 * accepts. Wrappers (the scene's limiter, the cassette recorder) spread it, so a field added here
 * reaches every wrapper at once.
 */
export function providerIdentity(provider: Provider): Pick<Provider, 'name' | 'model' | 'accepts' | 'spendsTokens'> {
  return {
    name: provider.name,
    ...(provider.model !== undefined && { model: provider.model }),
    ...(provider.accepts !== undefined && { accepts: provider.accepts }),
    ...(provider.spendsTokens !== undefined && { spendsTokens: provider.spendsTokens }),
  };
}
