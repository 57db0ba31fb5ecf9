// The dashboard's build: a static single-page app served under /dashboard/ by the API service.
// JSX is compiled by Vite's own transformer (React's automatic runtime); no plugin is needed.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export default {
  root: dirname(fileURLToPath(import.meta.url)),
  base: '/dashboard/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic' } },
  build: { emptyOutDir: true, sourcemap: false, target: 'es2022', chunkSizeWarningLimit: 600 },
};
