import { z } from 'zod';

export const chatAccountSchema = z
  .object({
    user_id: z.string(),
    user_name: z.string(),
    real_name: z.string(),
    display_name: z.string(),
    image_url: z.string(),
    team_id: z.string(),
  })
  .strict()
  .openapi('ChatAccount');

export const scmAccountSchema = z
  .object({ user_id: z.string(), username: z.string(), display_name: z.string(), avatar_url: z.string() })
  .strict()
  .openapi('ScmAccount');

export const userSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    picture: z.string(),
    connected_accounts: z.object({ chat: z.array(chatAccountSchema), scm: z.array(scmAccountSchema) }),
  })
  .openapi('User');

export const userParams = z.object({ id: z.string().min(1).max(200) }).strict();
export const newUserSchema = z.object({ email: z.email(), name: z.string().min(1), picture: z.string().default('') });

export type User = z.infer<typeof userSchema>;
export type ChatAccount = z.infer<typeof chatAccountSchema>;
export type ScmAccount = z.infer<typeof scmAccountSchema>;
