/** Mail hosting recognised from MX host names, most specific first. */
const PROVIDERS: [RegExp, string][] = [
  [/(^|\.)(aspmx\.l\.google\.com|googlemail\.com|google\.com|smtp\.google\.com)$/, 'Google Workspace'],
  [/(^|\.)mail\.protection\.outlook\.com$/, 'Microsoft 365'],
  [/(^|\.)(olc\.protection\.outlook\.com|hotmail\.com|outlook\.com)$/, 'Outlook.com'],
  [/(^|\.)(yahoodns\.net|yahoo\.com)$/, 'Yahoo Mail'],
  [/(^|\.)(icloud\.com|me\.com|mail\.icloud\.com)$/, 'iCloud Mail'],
  [/(^|\.)(zoho\.com|zoho\.eu|zoho\.in|zohomail\.com)$/, 'Zoho Mail'],
  [/(^|\.)(protonmail\.ch|proton\.me)$/, 'Proton Mail'],
  [/(^|\.)messagingengine\.com$/, 'Fastmail'],
  [/(^|\.)mimecast(-offshore)?\.com$/, 'Mimecast'],
  [/(^|\.)(pphosted\.com|ppe-hosted\.com|proofpoint\.com)$/, 'Proofpoint'],
  [/(^|\.)barracudanetworks\.com$/, 'Barracuda'],
  [/(^|\.)iphmx\.com$/, 'Cisco Secure Email'],
  [/(^|\.)(secureserver\.net)$/, 'GoDaddy'],
  [/(^|\.)(awsapps\.com|amazonaws\.com)$/, 'Amazon WorkMail'],
  [/(^|\.)(emailsrvr\.com)$/, 'Rackspace'],
  [/(^|\.)(yandex\.net|yandex\.ru)$/, 'Yandex Mail'],
  [/(^|\.)(mail\.ru)$/, 'Mail.ru'],
  [/(^|\.)(gmx\.net|gmx\.de|web\.de)$/, 'GMX / WEB.DE'],
  [/(^|\.)(ionos\.com|ionos\.de|1and1\.com|kundenserver\.de)$/, 'IONOS'],
  [/(^|\.)(ovh\.net)$/, 'OVHcloud'],
  [/(^|\.)(registrar-servers\.com|privateemail\.com)$/, 'Namecheap'],
  [/(^|\.)(titan\.email)$/, 'Titan'],
  [/(^|\.)(hostinger\.com)$/, 'Hostinger'],
  [/(^|\.)(mailgun\.org)$/, 'Mailgun'],
  [/(^|\.)(sendgrid\.net)$/, 'SendGrid'],
];

/** The mail provider behind a domain's MX hosts, or null when none is recognised (self-hosted or unknown). */
export function providerFromMx(hosts: readonly string[], domain?: string): string | null {
  for (const host of hosts) {
    const name = host.toLowerCase().replace(/\.$/, '');
    for (const [pattern, provider] of PROVIDERS) {
      if (!pattern.test(name)) continue;
      if (provider === 'Google Workspace' && (domain === 'gmail.com' || domain === 'googlemail.com')) return 'Gmail';
      return provider;
    }
  }
  return null;
}
