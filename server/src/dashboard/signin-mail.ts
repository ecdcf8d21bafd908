import { type Mail, mailButton, mailDocument, mailParagraph } from '../mail/index.ts';
import { LOGIN_LINK_MINUTES } from '../sessions/index.ts';

/** The mail of a sign-in link asked for on the sign-in page. */
export function signInMail(email: string, url: string): Mail {
  const subject = 'Your Proctor sign-in link';
  const lead = `Someone (you, we hope) asked to sign in to Proctor as ${email}.`;
  const once = `The link signs you in once, within ${LOGIN_LINK_MINUTES} minutes of being sent.`;
  const ignore = 'If you did not ask for it, ignore this mail: nobody signs in without the link.';
  return {
    to: [email],
    subject,
    text: `${lead}\n\nSign in:\n${url}\n\n${once}\n\n${ignore}\n`,
    html: mailDocument(
      subject,
      `<h1 style="font-size:20px;margin:0 0 8px">Sign in to Proctor</h1>${mailParagraph(lead)}${mailButton(url, 'Sign in')}
${mailParagraph(`Or open this link: ${url}`, true)}${mailParagraph(once, true)}${mailParagraph(ignore, true)}`,
    ),
  };
}
