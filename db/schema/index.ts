export * from './accounts.ts';
export * from './runs.ts';
export * from './local-businesses.ts';
