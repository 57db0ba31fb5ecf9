import { DynamicModule } from '@nestjs/common';
import { HookbaseConfig } from '@hookbase/config';
import type { HttpServing } from '@hookbase/runtime';
import { OrganizationRepository } from '@hookbase/persistence';
import { serveDashboard } from './dashboard-files';
import { serveDocs } from './docs-files';
import { createHttpApp, listen } from './http-app';
import { WebModule } from './web.module';

/** How an HTTP service is served: its modules with the web module, on Fastify, listening. */
export const serveHttp: HttpServing = async (root: DynamicModule, config: HookbaseConfig) => {
  root.imports = [...(root.imports ?? []), WebModule];
  const app = await createHttpApp(root, config);
  const url = await listen(app, config);
  return { app, url };
};

/**
 * As serveHttp, with the dashboard (the built SPA) at /dashboard/ and the documentation site at
 * /docs/: the API service's way.
 */
export const serveHttpWithDashboard: HttpServing = async (
  root: DynamicModule,
  config: HookbaseConfig,
) => {
  root.imports = [...(root.imports ?? []), WebModule];
  const app = await createHttpApp(root, config);
  const organizations = app.get(OrganizationRepository, { strict: false });
  serveDashboard(app.getHttpAdapter().getInstance(), undefined, (organizationId) =>
    organizations.portalSettings(organizationId),
  );
  serveDocs(app.getHttpAdapter().getInstance());
  const url = await listen(app, config);
  return { app, url };
};
