import type { MailMessage, Mailer } from '../core/ports.js';

/** Where the log mailer writes: the server's logger (pino's `info(object, message)`). */
export interface MailLog {
  info(fields: object, message: string): void;
}

/**
 * The mailer when no SMTP server is configured (GATEHOUSE_SMTP_URL unset): each mail, its link
 * included, is written to the log at `info`, so that a newcomer's two-command start can follow a
 * "Forgot password?" or "Verify" link from the terminal (docs/decisions.md, decision 35). A link is a
 * credential for 30 minutes: a deployment that keeps its logs anywhere others read them configures
 * SMTP (the server says at start where mail goes).
 */
export function createLogMailer(log: MailLog): Mailer {
  return {
    async send(message: MailMessage) {
      log.info(
        { mail: { to: message.to, subject: message.subject, text: message.text } },
        'mail not sent (GATEHOUSE_SMTP_URL is not set); here it is',
      );
    },
  };
}
