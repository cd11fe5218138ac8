// Outgoing mail over SMTP (SMTP_URL, MAIL_FROM: lib/config.ts), through nodemailer. The server is
// the operator's, not a tenant's: no outbound guard applies. Without SMTP_URL nothing is sent and
// callers show what they would have sent (an invitation's link) instead.
import { createTransport } from 'nodemailer';

export interface MailSettings {
  url: string;
  from: string;
}

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Sends one message; throws what the SMTP server answered when it refuses. */
export async function sendMail(settings: MailSettings, mail: Mail): Promise<void> {
  const transport = createTransport(settings.url, { from: settings.from });
  try {
    await transport.sendMail({ to: mail.to, subject: mail.subject, text: mail.text });
  } finally {
    transport.close();
  }
}
