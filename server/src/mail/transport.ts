import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import { type MailSettings, smtpServerOf } from '../config.ts';

// The one module that speaks SMTP (nodemailer). A mail always has a text and an HTML part; what
// it says is composed by the feature that sends it, its HTML escaped there (html.ts helps).
// Nothing here logs a mail's content (it may hold a sign-in or invitation link) or the SMTP
// credential: logs say what kind of mail went to how many people, and the server as scheme, host
// and port.

export interface Mail {
  to: string[];
  subject: string;
  text: string;
  html: string;
}

/** Why a mail was not taken by the SMTP server, in words that hold no secret; `permanent`: a 5xx answer. */
export class MailError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

export interface Mailer {
  /** The SMTP server, as logs may name it: `smtp://host:port`. */
  readonly server: string;
  /** Sends now: resolves once the SMTP server took the mail; rejects with a MailError. */
  send(mail: Mail): Promise<void>;
  /**
   * Sends in the background, for a request that answers without waiting on the SMTP server: tried
   * again twice (5 s, then 30 s later) unless refused for good; the outcome is logged, as `what`.
   */
  sendLater(mail: Mail, what: string): void;
  /** Resolves once every background send has ended (shutdown, tests). */
  idle(): Promise<void>;
}

const RETRY_DELAYS_MS = [5_000, 30_000];

/** Null when the server sends no mail (no PROCTOR_SMTP_URL). */
export function createMailer(settings: MailSettings | null, logger: Logger): Mailer | null {
  return settings ? new SmtpMailer(settings, logger) : null;
}

class SmtpMailer implements Mailer {
  readonly server: string;
  /** nodemailer, loaded by the first mail: an HTTP worker that sends none never holds it (issue 53). */
  private transport: Promise<Transporter> | null = null;
  private readonly secrets: string[];
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly settings: MailSettings,
    private readonly logger: Logger,
  ) {
    this.server = smtpServerOf(settings);
    const url = new URL(settings.smtpUrl);
    this.secrets = [url.password, decodeURIComponent(url.password)].filter((secret) => secret.length >= 3);
  }

  private transporter(): Promise<Transporter> {
    return (this.transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        // smtp:// (STARTTLS when offered) or smtps:// (TLS at once), with its user and password.
        url: this.settings.smtpUrl,
        // nodemailer's own logger would print the SMTP conversation: the AUTH line and every link.
        logger: false,
        debug: false,
        // A mail is composed of strings here: it never reads a file or fetches a URL.
        disableFileAccess: true,
        disableUrlAccess: true,
        connectionTimeout: 15_000,
        greetingTimeout: 15_000,
        socketTimeout: 30_000,
      }),
    ));
  }

  async send(mail: Mail): Promise<void> {
    try {
      await (await this.transporter()).sendMail({ from: this.settings.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
    } catch (error) {
      throw this.describe(error);
    }
  }

  sendLater(mail: Mail, what: string): void {
    const attempt = async (): Promise<void> => {
      for (let tries = 0; ; tries++) {
        try {
          await this.send(mail);
          this.logger.info({ mail: what, recipients: mail.to.length, smtp: this.server }, 'mail sent');
          return;
        } catch (error) {
          const problem = error instanceof MailError ? error : this.describe(error);
          const wait = RETRY_DELAYS_MS[tries];
          const again = !problem.permanent && wait !== undefined;
          this.logger.warn({ mail: what, recipients: mail.to.length, smtp: this.server, error: problem.message, retry: again }, 'mail not sent');
          if (!again) return;
          await new Promise((resolve) => setTimeout(resolve, wait).unref());
        }
      }
    };
    const sending = attempt().finally(() => this.pending.delete(sending));
    this.pending.add(sending);
  }

  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** nodemailer's error, with the SMTP password taken out should any part of it echo it. */
  private describe(error: unknown): MailError {
    const raw = error as { message?: string; code?: string; responseCode?: number };
    let message = `${raw.code ? `${raw.code}: ` : ''}${raw.message ?? String(error)}`;
    for (const secret of this.secrets) message = message.split(secret).join('••••');
    const permanent = typeof raw.responseCode === 'number' && raw.responseCode >= 500 && raw.responseCode < 600;
    return new MailError(message.slice(0, 500), permanent);
  }
}
