import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The console's build: console/src into console/dist (index.html and hashed files under assets/),
 * which the gateway serves (src/console). Vite transforms TSX itself (oxc); no inline script is
 * emitted (the module preload polyfill is off), so the page runs under the console's CSP.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  oxc: { jsx: { runtime: 'automatic' } },
  resolve: {
    // graphql 16 ships index.mjs beside index.js; one copy in the bundle.
    dedupe: ['graphql'],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    modulePreload: { polyfill: false },
    // Assets are files of their own, never data: URLs in scripts.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    rolldownOptions: {
      // Mantine marks its modules "use client" (a React Server Components hint); meaningless in a browser bundle.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  server: {
    // `npx vite console` while `npm start` runs: API calls go to the gateway.
    proxy: {
      '/graphql': { target: 'http://localhost:3000', ws: true },
      '/auth': 'http://localhost:3000',
      '/api': 'http://localhost:3000',
    },
  },
});
