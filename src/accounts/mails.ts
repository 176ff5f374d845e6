import type { Mail } from '../net/mail.ts';

/** The texts of the service's mails: plain text, and the same in simple HTML. */

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function mail(to: string, subject: string, lines: string[], link: { text: string; url: string }, footer: string): Mail {
  const text = [...lines, '', `${link.text}: ${link.url}`, '', footer].join('\n');
  const paragraphs = lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('');
  const html =
    `<!doctype html><html><body style="font-family: sans-serif">${paragraphs}` +
    `<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.text)}</a></p>` +
    `<p style="color: #666">${escapeHtml(footer)}</p></body></html>`;
  return { to, subject, text, html };
}

export function invitationMail(input: {
  to: string;
  accountName: string;
  role: string;
  inviter: string | null;
  url: string;
  expiresAt: Date;
}): Mail {
  return mail(
    input.to,
    `You are invited to ${input.accountName} on leadgate`,
    [
      `${input.inviter ?? 'An owner'} invited you to join the ` +
        `account “${input.accountName}” on leadgate as ${input.role}.`,
    ],
    { text: 'Accept the invitation', url: input.url },
    `The link works once, until ${input.expiresAt.toISOString()}. If you did not expect it, ignore this mail.`,
  );
}

export function passwordResetMail(input: { to: string; url: string; expiresAt: Date }): Mail {
  return mail(
    input.to,
    'Set your leadgate password',
    ['Someone (hopefully you) asked to set a new password for your leadgate account.'],
    { text: 'Set a new password', url: input.url },
    `The link works once, until ${input.expiresAt.toISOString()}; using it signs you out everywhere else. ` +
      'If you did not ask, ignore this mail: your password stays as it is.',
  );
}

export function emailVerificationMail(input: {
  to: string;
  url: string;
  expiresAt: Date;
  trialCreditsUsd: string | null;
}): Mail {
  return mail(
    input.to,
    'Verify your email for leadgate',
    [
      'Someone (hopefully you) signed up to leadgate with this address.',
      input.trialCreditsUsd
        ? `Verify it to receive your trial credits (${input.trialCreditsUsd} USD) in your account's wallet.`
        : 'Verify it to confirm the address is yours.',
    ],
    { text: 'Verify your email', url: input.url },
    `The link works until ${input.expiresAt.toISOString()}. ` +
      'If you did not sign up, ignore this mail: nothing happens without it.',
  );
}

/** The public opt-out page's confirmation link (privacy/opt-out.ts): the same words whoever the address belongs to. */
export function optOutMail(input: { to: string; url: string; expiresAt: Date }): Mail {
  return mail(
    input.to,
    'Confirm that leadgate should remove your email address',
    [
      'Someone (hopefully you) asked on leadgate’s opt-out page that this email address be removed from our data, ' +
        'and never given out again.',
      'Open the link and press the button on the page to confirm. If we hold nothing about you, confirming ' +
        'keeps the address out of any data we receive later.',
    ],
    { text: 'Confirm the opt-out', url: input.url },
    `The link works once, until ${input.expiresAt.toISOString()}. ` +
      'If you did not ask, ignore this mail: nothing changes without it.',
  );
}
