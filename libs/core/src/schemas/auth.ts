import { z } from 'zod';

export const LoginInput = z.object({
  username: z.string().min(1).max(1024),
  password: z.string().min(1).max(1024),
});
export type LoginInput = z.infer<typeof LoginInput>;

export const LoginResult = z.object({
  token: z.string().describe('HS256 JWT; send as Authorization: Bearer <token>'),
  expires_in: z.number().int().describe('seconds until the token expires'),
});

export const LogoutResult = z.object({ status: z.literal('logged_out') });
