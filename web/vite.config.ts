import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built with `vite build web` (npm run build:web). The app is served by `tandem serve` from the
// same origin as /api; `npm run dev:web` serves it with hot reload, passing /api and sign-in on.
const server = 'http://127.0.0.1:8787';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Which chunks each page needs: bench/web.ts measures first loads from it.
    manifest: true,
    // No inline scripts: the app's policy allows scripts from its own origin only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    target: 'es2022',
  },
  server: {
    proxy: { '/api': server, '/login': server, '/logout': server },
    fs: { allow: ['..'] },
  },
});
