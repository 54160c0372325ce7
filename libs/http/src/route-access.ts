import type { Permission } from '@sluice/auth';

/**
 * What a route needs from its caller: nothing (`public`), any valid credentials
 * (`authenticated`), or a role holding a permission. Every route declares one in
 * `config.access`; the API's access control refuses to start with a route that forgets.
 */
export type Access = Permission | 'public' | 'authenticated';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
}
