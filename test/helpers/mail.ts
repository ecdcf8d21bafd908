import { MailDev } from 'maildev';
import { waitUntil } from './runs.ts';

// A real SMTP server for the mail tests: MailDev, in this process, on a free port, asking for a
// user and password as a provider's server would; what it received is read from its store.

export interface ReceivedMail {
  to: string[];
  from: string[];
  subject: string;
  text: string;
  html: string;
}

export interface MailServer {
  /** PROCTOR_SMTP_URL for it, with its user and password. */
  smtpUrl: string;
  password: string;
  received(): Promise<ReceivedMail[]>;
  /** The first mail to `address` that `match` takes, once it has arrived. */
  mailTo(address: string, match?: (mail: ReceivedMail) => boolean): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startMailServer(): Promise<MailServer> {
  const password = `smtp-Pa55-${Math.random().toString(36).slice(2, 10)}`;
  const maildev = new MailDev({ smtp: 0, ip: '127.0.0.1', disableWeb: true, silent: true, incomingUser: 'proctor', incomingPass: password });
  const servers = await maildev.start();
  const port = (servers.smtp as unknown as { port: number }).port;
  const received = async (): Promise<ReceivedMail[]> =>
    (await servers.storage.getAll()).map((mail) => ({
      to: mail.to.map((address) => address.address.toLowerCase()),
      from: mail.from.map((address) => address.address),
      subject: mail.subject,
      text: mail.text ?? '',
      html: mail.html ?? '',
    }));
  const mailTo = async (address: string, match: (mail: ReceivedMail) => boolean = () => true) => {
    const find = async () => (await received()).find((mail) => mail.to.includes(address.toLowerCase()) && match(mail));
    await waitUntil(async () => (await find()) !== undefined, 20_000, `a mail to ${address}`);
    return (await find()) as ReceivedMail;
  };
  return {
    smtpUrl: `smtp://proctor:${encodeURIComponent(password)}@127.0.0.1:${port}`,
    password,
    received,
    mailTo,
    close: () => maildev.stop(),
  };
}

/** The links a mail's text part holds. */
export function linksIn(text: string): string[] {
  return [...text.matchAll(/https?:\/\/\S+/g)].map((match) => match[0]);
}
