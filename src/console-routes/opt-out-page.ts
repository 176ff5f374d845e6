import { createHash } from 'node:crypto';

/**
 * The public opt-out page's HTML (routes in opt-out.ts): server-rendered, complete in one answer, with
 * no script, no file to load and one inline stylesheet allowed by its hash, so it works with JavaScript
 * off, offline from anything but the gateway, under a policy stricter than the console's. Plain words,
 * one heading a page, labelled fields whose errors are tied to them.
 */

const STYLE = `
:root { color-scheme: light; }
body { margin: 0; font: 1.0625rem/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1a1b1e; background: #f4f5f7; }
main { max-width: 34rem; margin: 2.5rem auto 1.5rem; padding: 2rem; background: #fff;
  border: 1px solid #d0d4da; border-radius: 0.5rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 1rem; }
p, form { margin: 0 0 1rem; }
main > :last-child { margin-bottom: 0; }
label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
.hint { color: #4a4f57; font-size: 0.95rem; margin: 0 0 0.5rem; }
.error { color: #b3261e; font-weight: 600; margin: 0 0 0.5rem; }
input[type="email"] { box-sizing: border-box; width: 100%; font: inherit; padding: 0.55rem 0.7rem;
  border: 1px solid #6b7079; border-radius: 0.35rem; margin-bottom: 1rem; }
input[aria-invalid="true"] { border: 2px solid #b3261e; }
button { font: inherit; font-weight: 600; color: #fff; background: #1c4fa6; border: 0;
  border-radius: 0.35rem; padding: 0.6rem 1.2rem; cursor: pointer; }
button:hover { background: #163f85; }
a { color: #1c4fa6; }
:focus-visible { outline: 3px solid #e8a100; outline-offset: 2px; }
code { font-size: 1rem; background: #eef0f3; padding: 0.1rem 0.3rem; border-radius: 0.25rem; }
footer { max-width: 34rem; margin: 0 auto 2rem; padding: 0 2rem; font-size: 0.9rem; color: #4a4f57; }
`;

const styleHash = createHash('sha256').update(STYLE).digest('base64');

/**
 * The page's Content-Security-Policy: nothing may load or run, the one stylesheet by its hash, forms
 * post to the gateway only, and no one may frame it (the link page shows an address).
 */
export const OPT_OUT_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${styleHash}'`,
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const escapeHtml = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

/** A whole page: `body` is HTML already escaped. */
function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · leadgate</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
<footer>
<p>leadgate · <a href="/opt-out">Opt out of our data</a> · <a href="/sign-in">Customers: sign in</a></p>
</footer>
</body>
</html>
`;
}

const back = '<p><a href="/opt-out">Back to the opt-out page</a></p>';

/** The form; `error` and `value` after a refused address (the field says why and keeps what was typed). */
export function optOutForm(options: { error?: string; value?: string } = {}): string {
  const { error, value } = options;
  const described = error ? 'email-hint email-error' : 'email-hint';
  return page(
    error ? 'Error: opt out of our data' : 'Opt out of our data',
    `<h1>Opt out of leadgate’s data</h1>
<p>leadgate is a service businesses use to find contact details of people at companies. If you would rather
not be in it, give us your email address. We send a link to it; when you open the link and confirm, we delete
what we hold about the address and keep it out of our data for good, including data we receive later.</p>
<p>We answer the same whether or not we hold anything about you, so this page never tells anyone who is in
our data.</p>
<form method="post" action="/opt-out" novalidate>
<label for="email">Email address</label>
<p class="hint" id="email-hint">The address you want removed. We use it only to send you the link.</p>
${error ? `<p class="error" id="email-error">${escapeHtml(error)}</p>` : ''}
<input type="email" id="email" name="email" autocomplete="email" maxlength="254" required
 aria-describedby="${described}"${error ? ' aria-invalid="true" autofocus' : ''} value="${escapeHtml(value ?? '')}">
<button type="submit">Send me the link</button>
</form>
<p class="hint">Removing a phone number is not offered on this page.</p>`,
  );
}

/** The answer to every well-formed address: the same bytes whoever it belongs to. */
export function optOutSent(linkHours: number, mailsPerHour: number): string {
  return page(
    'Check your inbox',
    `<h1>Check your inbox</h1>
<p>We have sent a link to the address you gave. Open it and press the button on the page to confirm: if we
hold data about the address, we delete it, and either way we keep the address out of our data from then on.</p>
<p>The link works once, for ${linkHours} hours. If no mail comes within a few minutes, look in your spam
folder, or ask again (at most ${mailsPerHour} links an hour for one address).</p>
${back}`,
  );
}

/** Past a limit: try again later, in words that say nothing of who is held. */
export function optOutLimited(retryAfterSecs: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterSecs / 60));
  return page(
    'Try again later',
    `<h1>Please try again later</h1>
<p>Too many requests came from your connection, or for this address, in the last hour. Try again in about
${minutes} ${minutes === 1 ? 'minute' : 'minutes'}.</p>
${back}`,
  );
}

/** A POST sent from another site (a cross-site form), refused. */
export function optOutCrossSite(): string {
  return page(
    'Request refused',
    `<h1>This request was refused</h1>
<p>It was sent from another website. To opt out, use the form on our own opt-out page.</p>
${back}`,
  );
}

/** The page a mailed link opens: what confirming does, and the button (a GET never erases). */
export function optOutConfirmForm(token: string, value: string): string {
  return page(
    'Confirm your opt-out',
    `<h1>Confirm your opt-out</h1>
<p>Press the button to remove <strong>${escapeHtml(value)}</strong> from leadgate’s data. We delete what we
hold about it and keep it out for good, including data we receive later. This cannot be undone.</p>
<form method="post" action="/opt-out/confirm">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<button type="submit">Remove my data</button>
</form>
<p>If you did not ask for this, close this page: nothing changes.</p>`,
  );
}

/** Confirmed: erased and kept out, with the receipt. */
export function optOutDone(value: string, receiptId: string): string {
  return page(
    'You have opted out',
    `<h1>You have opted out</h1>
<p>We have deleted what we held about <strong>${escapeHtml(value)}</strong>, and we will keep it out of our
data, including data we receive later.</p>
<p>Your receipt number is <code>${escapeHtml(receiptId)}</code>. Keep it if you want to refer to this
request.</p>`,
  );
}

/** A link that cannot be used, in plain words: used already, expired, or not one we sent. */
export function optOutLinkRefused(
  link: { state: 'used'; usedAt: Date; receiptId: string | null } | { state: 'expired' | 'unknown' },
  linkHours: number,
): string {
  if (link.state === 'used')
    return page(
      'Link already used',
      `<h1>This link has already been used</h1>
<p>The opt-out it asked for was confirmed on ${escapeHtml(link.usedAt.toISOString().slice(0, 10))}${
        link.receiptId ? `, receipt number <code>${escapeHtml(link.receiptId)}</code>` : ''
      }. There is nothing more to do.</p>
${back}`,
    );
  if (link.state === 'expired')
    return page(
      'Link expired',
      `<h1>This link has expired</h1>
<p>Links work for ${linkHours} hours. Nothing was removed: ask for a new link on the opt-out page.</p>
${back}`,
    );
  return page(
    'Link not valid',
    `<h1>This link does not work</h1>
<p>It is not a link we sent, or it was cut short when copied. Nothing was removed: open the link from the
mail again, or ask for a new one on the opt-out page.</p>
${back}`,
  );
}

/** Something failed on our side: nothing was done, try again. */
export function optOutFailed(unavailable: boolean): string {
  return page(
    'Something went wrong',
    `<h1>Something went wrong on our side</h1>
<p>${
      unavailable ? 'The service is briefly unavailable.' : 'The error was logged.'
    } Your request was not completed: try again in a few minutes.</p>
${back}`,
  );
}

/** A request the page cannot read (another format, too large). */
export function optOutUnreadable(): string {
  return page(
    'Request not understood',
    `<h1>This request could not be read</h1>
<p>Use the form on the opt-out page.</p>
${back}`,
  );
}
