// What other features may use of mail: the sender (null when the server sends none) and the HTML helpers.
export { createMailer, type Mail, MailError, type Mailer } from './transport.ts';
export { escapeHtml, mailButton, mailDocument, mailParagraph } from './html.ts';
