#!/usr/bin/env node
// `npx leadgate …`: runs the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api';

register();
await import('./index.ts');
