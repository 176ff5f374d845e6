import type { ReactNode } from 'react';
import { AppShell, Button, Group, NavLink, Text, Title } from '@mantine/core';
import { Link, useLocation } from 'react-router';
import { useSession } from './lib/session-context.tsx';

interface Page {
  to: string;
  label: string;
  /** Roles that see the page; every role when absent. */
  roles?: readonly string[];
}

const PAGES: Page[] = [
  { to: '/', label: 'Overview' },
  { to: '/tools', label: 'Tools' },
  { to: '/runs', label: 'Runs' },
  { to: '/leads', label: 'Lead database' },
  { to: '/enrichment', label: 'Enrichment' },
  { to: '/keys', label: 'API keys', roles: ['owner', 'admin'] },
  { to: '/webhooks', label: 'Webhooks', roles: ['owner', 'admin'] },
  { to: '/members', label: 'Members', roles: ['owner', 'admin'] },
  { to: '/billing', label: 'Billing', roles: ['owner'] },
  { to: '/sessions', label: 'Sessions' },
];

/** The signed-in frame: the account and user, the pages the role may see, sign out. */
export function Shell({ children }: { children: ReactNode }) {
  const { session, signOut } = useSession();
  const { pathname } = useLocation();
  const active = (to: string) => (to === '/' ? pathname === '/' : pathname.startsWith(to));
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm' }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Group gap="xs">
            <Title order={1} size="h4">
              leadgate
            </Title>
            <Text c="dimmed" size="sm">
              {session.account.name}
            </Text>
          </Group>
          <Group gap="sm">
            <Text size="sm">
              {session.user.email} ({session.role})
            </Text>
            <Button variant="default" size="xs" onClick={() => void signOut()}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label="Console pages">
        {PAGES.filter((p) => !p.roles || p.roles.includes(session.role)).map((p) => (
          <NavLink key={p.to} component={Link} to={p.to} label={p.label} active={active(p.to)} variant="filled" aria-current={active(p.to) ? 'page' : undefined} />
        ))}
        <NavLink component="a" href="/graphql" label="GraphQL explorer" target="_blank" rel="noopener" />
      </AppShell.Navbar>
      <AppShell.Main>{children}</AppShell.Main>
    </AppShell>
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
