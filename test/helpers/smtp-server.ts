import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A real SMTP server on a free loopback port, keeping every mail it is given (parsed). */
export interface TestSmtpServer {
  port: number;
  /** The URL Gatehouse sends through (GATEHOUSE_SMTP_URL), with the server's user and password. */
  url: string;
  readonly user: string;
  readonly password: string;
  readonly mails: ParsedMail[];
  /** The `index`-th mail received (0-based), once it has arrived. */
  mail(index: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

/**
 * Starts smtp-server (Nodemailer's own SMTP server) with AUTH required: a mail reaches it only with
 * the user and password of the URL. Plain SMTP on loopback (no STARTTLS): what is tested is the
 * conversation and the mail, not TLS.
 */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const user = 'gatehouse';
  const password = 'smtp-secret-9f3a';
  const mails: ParsedMail[] = [];
  const waiting: (() => void)[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === password) callback(null, { user });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          mails.push(mail);
          for (const wake of waiting.splice(0)) wake();
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    url: `smtp://${user}:${password}@127.0.0.1:${port}`,
    user,
    password,
    mails,
    async mail(index) {
      while (mails.length <= index) await new Promise<void>((resolve) => waiting.push(resolve));
      return mails[index] as ParsedMail;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
