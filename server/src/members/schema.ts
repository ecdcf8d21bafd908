import { z } from 'zod';
import { ROLES } from '../principals.ts';

const role = z
  .enum(ROLES)
  .describe('viewer: reads the project; member: also reports, triggers, snoozes, triages, pins; admin: also configures, manages keys and people, unpins');

export const memberSchema = z
  .object({
    user_id: z.string(),
    email: z.string(),
    name: z.string(),
    role: z.enum(ROLES),
    joined_at: z.string(),
  })
  .openapi('Member');

export const invitationSchema = z
  .object({
    id: z.number().int(),
    email: z.string(),
    role: z.enum(ROLES),
    created_by: z.string().nullable().describe("the inviting person's name"),
    created_at: z.string(),
    expires_at: z.string(),
  })
  .openapi('Invitation');

export const newMemberSchema = z
  .object({
    email: z.email().max(320).describe('a person with an account joins at once; anyone else gets an invitation'),
    role: role.default('member'),
  })
  .strict()
  .openapi('NewMember');

export const memberUpdateSchema = z.object({ role }).strict().openapi('MemberUpdate');

export const memberParams = z.object({ user_id: z.string().min(1).max(200) }).strict();
export const invitationParams = z.object({ id: z.coerce.number().int().min(1).max(2_147_483_647) }).strict();

export const memberListResponse = z.object({
  data: z.object({ members: z.array(memberSchema), invitations: z.array(invitationSchema).describe('pending: not used and not expired') }),
});
export const memberResponse = z.object({ data: z.object({ member: memberSchema }) });
export const addedResponse = z.object({
  data: z.union([
    z.object({ member: memberSchema }),
    z.object({
      invitation: invitationSchema.extend({
        url: z.string().describe('the one-time link to hand the person, shown this once; valid PROCTOR_INVITE_DAYS (7) days'),
        mailed: z
          .boolean()
          .describe('whether the server mails the link to the person (it sends mail: PROCTOR_SMTP_URL), after this answer; false: pass the link on yourself'),
      }),
    }),
  ]),
});
export const successResponse = z.object({ data: z.object({ success: z.boolean() }) });

export type NewMember = z.infer<typeof newMemberSchema>;
export type MemberView = z.infer<typeof memberSchema>;
export type InvitationView = z.infer<typeof invitationSchema>;
