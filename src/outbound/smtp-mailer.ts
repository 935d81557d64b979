import { createTransport } from 'nodemailer';
import type { MailMessage, Mailer } from '../core/ports.js';

/** A mail the SMTP server did not take. The message names no credentials and no part of the mail. */
export class MailSendError extends Error {
  override name = 'MailSendError';
}

export interface SmtpMailerOptions {
  /** GATEHOUSE_SMTP_URL: smtp:// (STARTTLS when offered) or smtps://, user and password in it. */
  url: string;
  /** GATEHOUSE_MAIL_FROM. */
  from: string;
}

/**
 * Mail over SMTP with nodemailer (docs/decisions.md, decision 35): the well-kept Node.js mailer (no
 * runtime dependencies of its own), which speaks SMTP, STARTTLS, TLS and AUTH and pools nothing
 * here: a recovery mail is rare, so each send opens a connection and closes it.
 */
export function createSmtpMailer(options: SmtpMailerOptions): Mailer {
  const transport = createTransport(options.url);
  const secrets = credentialsOf(options.url);
  return {
    async send(message: MailMessage) {
      try {
        await transport.sendMail({
          from: options.from,
          to: message.to,
          subject: message.subject,
          text: message.text,
        });
      } catch (error) {
        throw new MailSendError(`the SMTP server did not take the mail: ${describe(error, secrets)}`);
      }
    },
    async close() {
      transport.close();
    },
  };
}

/** The user and password the URL holds, to be kept out of any message we write. */
function credentialsOf(url: string): string[] {
  const parsed = new URL(url);
  return [parsed.username, parsed.password, decodeURIComponent(parsed.password)].filter(
    (part) => part.length >= 3,
  );
}

/**
 * What went wrong, in nodemailer's words (its code, the server's reply code and first line), with the
 * URL's user and password cut out should a reply repeat them.
 */
function describe(error: unknown, secrets: readonly string[]): string {
  const { code, responseCode, message } = error as {
    code?: unknown;
    responseCode?: unknown;
    message?: unknown;
  };
  let text = [code, responseCode, typeof message === 'string' ? message.split('\n')[0] : undefined]
    .filter((part) => part !== undefined && part !== '')
    .join(' ');
  for (const secret of secrets) text = text.split(secret).join('***');
  return text === '' ? 'unknown error' : text;
}
