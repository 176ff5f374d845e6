import { int } from './env.ts';

/** The public opt-out page, /opt-out (docs/privacy.md#the-opt-out-page). */
export interface OptOutConfig {
  /**
   * Confirmation links mailed to one email address an hour (OPT_OUT_MAILS_PER_HOUR); past it the page
   * answers "try again later". Default 3; at least 1.
   */
  mailsPerAddress: number;
  /**
   * Opt-out requests one client address (an IPv6 /64, see TRUST_PROXY) may send an hour
   * (OPT_OUT_REQUESTS_PER_HOUR). Default 20; at least 1.
   */
  requestsPerClient: number;
  /**
   * SMS_PROVIDER: the provider that would text a confirmation code to a phone number. None is built in,
   * so it must stay unset and the page offers email only; a provider is added here, as a value this
   * accepts and a sender beside the mailer.
   */
  smsProvider: undefined;
}

/** OPT_OUT_MAILS_PER_HOUR, OPT_OUT_REQUESTS_PER_HOUR and SMS_PROVIDER (see OptOutConfig). */
export function optOut(env: NodeJS.ProcessEnv): OptOutConfig {
  if (env.SMS_PROVIDER) {
    throw new Error(
      `SMS_PROVIDER: no SMS provider is built in yet, got "${env.SMS_PROVIDER}"; leave it unset ` +
        '(the opt-out page then offers email only)',
    );
  }
  return {
    mailsPerAddress: Math.max(1, int(env.OPT_OUT_MAILS_PER_HOUR, 3)),
    requestsPerClient: Math.max(1, int(env.OPT_OUT_REQUESTS_PER_HOUR, 20)),
    smsProvider: undefined,
  };
}
