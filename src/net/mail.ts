import nodemailer, { type Transporter } from 'nodemailer';
import type { MailConfig } from '../config.ts';
import type { Logger } from '../logger.ts';

/** One outgoing mail: plain text, and the same in simple HTML. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  /** Sends `mail`; rejects when the SMTP server refuses it or cannot be reached. */
  send(mail: Mail): Promise<void>;
  close(): void;
}

/**
 * The service's own mail (invitations, password resets) through the operator's SMTP server
 * (SMTP_URL). Without one, each mail is written to the log at info level instead, so a local user can
 * still follow its link. These connections go to the server the operator configured, not through the
 * outbound guard that keeps the contact tools off private addresses: a mail relay on the local network
 * is the usual case.
 */
export function createMailer(config: MailConfig, logger: Logger): Mailer {
  if (!config.smtpUrl) {
    const log = logger.child({ component: 'mail' });
    return {
      async send(mail) {
        log.info(
          { mail: { to: mail.to, subject: mail.subject, text: mail.text } },
          `mail not sent (SMTP_URL is unset): ${mail.subject}`,
        );
      },
      close() {},
    };
  }
  const transport: Transporter = nodemailer.createTransport(config.smtpUrl, { from: config.from });
  return {
    async send(mail) {
      await transport.sendMail({ to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
    },
    close: () => transport.close(),
  };
}
