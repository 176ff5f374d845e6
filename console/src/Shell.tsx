import { useEffect, useState, type ReactNode } from 'react';
import { Alert, AppShell, Burger, Button, Group, NavLink, Stack, Text, Title } from '@mantine/core';
import { useDisclosure, useMediaQuery } from '@mantine/hooks';
import { Link, useLocation } from 'react-router';
import { auth, type SessionView } from './lib/session.ts';
import { useSession } from './lib/session-context.tsx';

interface Page {
  to: string;
  label: string;
  /** What the signed-in user must be allowed to do (the session's `permissions`) to see the page; every user when absent. */
  permission?: SessionView['permissions'][number];
}

const PAGES: Page[] = [
  { to: '/', label: 'Overview' },
  { to: '/tools', label: 'Tools' },
  { to: '/runs', label: 'Runs' },
  { to: '/pipelines', label: 'Pipelines' },
  { to: '/schedules', label: 'Schedules' },
  { to: '/datasets', label: 'Datasets' },
  { to: '/destinations', label: 'Destinations' },
  { to: '/connections', label: 'Connections' },
  { to: '/leads', label: 'Lead database' },
  { to: '/enrichment', label: 'Enrichment' },
  { to: '/do-not-contact', label: 'Do not contact' },
  { to: '/keys', label: 'API keys', permission: 'keys' },
  { to: '/webhooks', label: 'Webhooks', permission: 'webhooks' },
  { to: '/members', label: 'Members', permission: 'members' },
  { to: '/billing', label: 'Billing', permission: 'billing' },
  { to: '/audit-log', label: 'Audit log', permission: 'audit' },
  { to: '/sessions', label: 'Sessions' },
];

/**
 * The signed-in frame: the account and user, the pages the role may see, sign out. Below the `sm`
 * breakpoint the navigation is a menu behind a burger button, closed when a page is chosen, and the
 * account and user move from the header into it.
 */
export function Shell({ children }: { children: ReactNode }) {
  const { session, signOut } = useSession();
  const { pathname } = useLocation();
  const [menuOpen, menu] = useDisclosure(false);
  // Below the breakpoint a closed menu is moved off screen: hidden too, so keyboards and readers skip it.
  const phone = useMediaQuery('(max-width: 48em)');
  // A page chosen (or any navigation) closes the menu on a phone.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on each change of page
  useEffect(() => menu.close(), [pathname]);
  const active = (to: string) => (to === '/' ? pathname === '/' : pathname.startsWith(to));
  const who = `${session.user.email} (${session.role})`;
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !menuOpen } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="xs" wrap="nowrap" miw={0}>
            <Burger
              opened={menuOpen}
              onClick={menu.toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label={menuOpen ? 'Close the menu' : 'Open the menu'}
              aria-expanded={menuOpen}
              aria-controls="console-pages"
            />
            <Title order={1} size="h4">
              leadgate
            </Title>
            <Text c="dimmed" size="sm" visibleFrom="sm" truncate>
              {session.account.name}
            </Text>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <Text size="sm" visibleFrom="sm">
              {who}
            </Text>
            <Button variant="default" size="xs" onClick={() => void signOut()}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar
        id="console-pages"
        p="xs"
        component="nav"
        aria-label="Console pages"
        style={phone && !menuOpen ? { visibility: 'hidden' } : undefined}
      >
        <Stack gap={0} hiddenFrom="sm" mb="xs" px="xs">
          <Text size="sm" fw={600}>
            {session.account.name}
          </Text>
          <Text size="sm" c="dimmed">
            {who}
          </Text>
        </Stack>
        {PAGES.filter((p) => !p.permission || session.permissions.includes(p.permission)).map((p) => (
          <NavLink
            key={p.to}
            component={Link}
            to={p.to}
            label={p.label}
            active={active(p.to)}
            variant="filled"
            aria-current={active(p.to) ? 'page' : undefined}
            onClick={menu.close}
          />
        ))}
        <NavLink component="a" href="/graphql" label="GraphQL explorer" target="_blank" rel="noopener" />
      </AppShell.Navbar>
      <AppShell.Main miw={0}>
        {!session.user.emailVerified && <VerifyEmailBanner />}
        {children}
      </AppShell.Main>
    </AppShell>
  );
}

/** Above every page until the user's email is verified: what the link is for, and sending it again. */
function VerifyEmailBanner() {
  const { session } = useSession();
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<{ ok: boolean; text: string } | null>(null);
  const title = session.trialCredits ? 'Verify your email to receive your trial credits' : 'Verify your email';
  const resend = async () => {
    setBusy(true);
    try {
      setAnswer({ ok: true, text: (await auth.resendVerification(session.csrfToken)).message });
    } catch (err) {
      setAnswer({ ok: false, text: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };
  return (
    <Alert color="yellow" role="region" title={title} mb="md">
      <Text size="sm">
        We mailed a link to {session.user.email}.{' '}
        {session.trialCredits
          ? `Follow it to confirm the address: ${session.trialCredits} USD of trial credits for paid tools then come to your wallet.`
          : 'Follow it to confirm the address is yours.'}
      </Text>
      <Group gap="sm" mt="xs">
        <Button size="xs" variant="default" loading={busy} onClick={() => void resend()}>
          Send the link again
        </Button>
        {answer && (
          <Text size="sm" role="status" c={answer.ok ? undefined : 'red.9'}>
            {answer.text}
          </Text>
        )}
      </Group>
    </Alert>
  );
}

/** A page's heading and what it is for. */
export function PageTitle({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <>
      <Title order={2} mb="xs">
        {title}
      </Title>
      {children && (
        <Text c="dimmed" mb="md">
          {children}
        </Text>
      )}
    </>
  );
}
