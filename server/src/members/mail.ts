import { escapeHtml as e, type Mail, mailButton, mailDocument, mailParagraph } from '../mail/index.ts';
import type { InvitationView } from './schema.ts';

// The invitation's mail: who asks the person into which project with which role, and the link.

const ROLE_TEXT = { viewer: 'a viewer', member: 'a member', admin: 'an admin' } as const;

export function invitationMail(invitation: InvitationView & { url: string }, projectName: string): Mail {
  const who = invitation.created_by ?? 'An administrator';
  const expires = `${invitation.expires_at.slice(0, 16).replace('T', ' ')} UTC`;
  const subject = `${who} invites you to ${projectName} on Proctor`.replace(/[\r\n]+/g, ' ');
  const lead = `${who} invites you to join the project ${projectName} on Proctor as ${ROLE_TEXT[invitation.role]}.`;
  const once = `The link works once, until ${expires}. It makes your account for ${invitation.email} and signs you in; if that email has an account already, sign in as it first, then follow the link.`;
  const ignore = 'If you did not expect this invitation, ignore this mail: nothing happens without the link.';
  return {
    to: [invitation.email],
    subject,
    text: `${lead}\n\nAccept the invitation:\n${invitation.url}\n\n${once}\n\n${ignore}\n`,
    html: mailDocument(
      subject,
      `<h1 style="font-size:20px;margin:0 0 8px">You are invited to ${e(projectName)}</h1>${mailParagraph(lead)}${mailButton(invitation.url, 'Accept the invitation')}
${mailParagraph(`Or open this link: ${invitation.url}`, true)}${mailParagraph(once, true)}${mailParagraph(ignore, true)}`,
    ),
  };
}
