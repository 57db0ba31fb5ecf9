export * from './verify';
export { expressWebhook, type ExpressWebhookOptions, type ExpressLikeRequest } from './express';
export { fastifyWebhook } from './fastify';
export { HookbaseWebhookGuard, HookbaseWebhook } from './nest';
