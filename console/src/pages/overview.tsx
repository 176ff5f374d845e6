import {
  Anchor,
  Card,
  Code,
  CopyButton,
  Button,
  Group,
  List,
  Progress,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import { Ago, Loading, Money, QueryError, StatusBadge, TableScroll } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { TrialPrompt } from '../plans.tsx';
import { useSession } from '../lib/session-context.tsx';
import {
  ALLOWANCE_KIND_WORDS,
  count,
  duration,
  PLAN_WORDS,
  SUBSCRIPTION_STATUS_WORDS,
  TOOL_WORDS,
  usd2,
  word,
} from '../lib/format.ts';

const OverviewQuery = graphql(`
  query ConsoleOverview {
    viewer {
      id
      plan
      subscriptionStatus
      wallet {
        balance
        purchasedCredits
        totalBalance
        held
      }
      allowancesToday {
        kind
        limit
        used
        remaining
        resetsAt
      }
    }
    recent: runs(first: 8) {
      totalCount
      nodes {
        id
        tool
        status
        statusMessage
        itemCount
        cost
        createdAt
        startedAt
        finishedAt
      }
    }
  }
`);

/**
 * What the owners' and admins' checklist reads besides runs: the account's keys, whether one was used, and
 * whether the account has downloaded rows yet.
 */
const KeysQuery = graphql(`
  query ConsoleOverviewKeys {
    viewer {
      id
      firstDownloadAt
      apiKeys(first: 100) {
        totalCount
        nodes {
          id
          lastUsedAt
        }
      }
    }
  }
`);

/** What runs were charged this month (owners and admins: who may read the ledger). */
const SpendQuery = graphql(`
  query ConsoleOverviewSpend {
    viewer {
      id
      spentThisMonth
    }
  }
`);

function useSpend(paused: boolean) {
  const [{ data }] = useQuery({ query: SpendQuery, pause: paused, requestPolicy: 'cache-and-network' });
  return data?.viewer.spentThisMonth;
}

/** Micro-dollars of a decimal USD string, so the share is exact. */
const micros = (amount: string) => {
  const [whole = '0', fraction = ''] = amount.replace('-', '').split('.');
  const value = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
  return amount.startsWith('-') ? -value : value;
};

/** Spend this calendar month (UTC), beside what is left in the wallet. */
function SpendCard({ spent, wallet }: { spent: string | undefined; wallet: { totalBalance: string } }) {
  if (spent === undefined) return null;
  const used = micros(spent);
  const left = micros(wallet.totalBalance);
  const share = used + left > 0n ? Number((used * 1000n) / (used + left)) / 10 : 0;
  return (
    <Card withBorder>
      <Title order={3} size="h5">
        Spent this month
      </Title>
      <Text size="xl" fw={700}>
        <Money amount={spent} />
      </Text>
      <Progress value={share} aria-label="Spent this month, of what the wallet held" size="sm" my="xs" />
      <Text size="sm">
        {usd2(wallet.totalBalance)} left in the wallet. <Link to="/billing">Billing</Link> lists every charge.
      </Text>
    </Card>
  );
}

/** The REST call the checklist offers to copy: it reads the wallet with the key just made. */
const curlOf = (origin: string) => `curl -s ${origin}/api/v1/wallet -H "Authorization: Bearer $LEADGATE_KEY"`;

function Checklist({
  keys,
  downloaded,
  runs,
  succeeded,
}: {
  keys: { totalCount: number; nodes: { lastUsedAt?: string | null }[] };
  downloaded: boolean;
  runs: number;
  succeeded: string | undefined;
}) {
  const steps = [
    {
      name: 'Create an API key',
      done: keys.totalCount > 0,
      body: (
        <Text size="sm">
          On <Link to="/keys">API keys</Link>: copy its secret, it is shown once.
        </Text>
      ),
    },
    {
      name: 'Call the API with it',
      done: keys.nodes.some((k) => k.lastUsedAt),
      body: (
        <Stack gap={4}>
          <Text size="sm">Put the key in LEADGATE_KEY and paste this in a terminal; it answers the wallet.</Text>
          <Group gap="xs" wrap="nowrap" align="flex-start">
            <Code block style={{ flex: 1, minWidth: 0, whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
              {curlOf(window.location.origin)}
            </Code>
            <CopyButton value={curlOf(window.location.origin)}>
              {({ copied, copy }) => (
                <Button size="xs" variant="default" onClick={copy}>
                  {copied ? 'Copied' : 'Copy the curl command'}
                </Button>
              )}
            </CopyButton>
          </Group>
        </Stack>
      ),
    },
    {
      name: 'Start your first run',
      done: runs > 0,
      body: (
        <Text size="sm">
          Pick a tool on <Link to="/tools">Tools</Link>, fill its form and press Start.
        </Text>
      ),
    },
    {
      name: 'Download its rows',
      done: downloaded,
      body: (
        <Text size="sm">
          {succeeded ? (
            <>
              Open <Link to={`/runs/${succeeded}`}>your latest run</Link> and download CSV, JSON or NDJSON.
            </>
          ) : (
            'Once a run has ended, its page offers CSV, JSON and NDJSON.'
          )}
        </Text>
      ),
    },
  ];
  const done = steps.filter((s) => s.done).length;
  if (done === steps.length) return null;
  return (
    <Card withBorder component="section" aria-labelledby="getting-started">
      <Title order={3} size="h5" id="getting-started">
        Getting started
      </Title>
      <Text size="sm" mb="xs">
        {done} of {steps.length} steps done.
      </Text>
      <List spacing="sm" listStyleType="none" aria-label="Getting started steps">
        {steps.map((s) => (
          <List.Item key={s.name} aria-label={`${s.name}: ${s.done ? 'done' : 'to do'}`}>
            <Text fw={600} size="sm" td={s.done ? 'line-through' : undefined}>
              {s.done ? '✓ ' : '○ '}
              {s.name}
            </Text>
            {!s.done && s.body}
          </List.Item>
        ))}
      </List>
    </Card>
  );
}

const runTime = (run: { startedAt?: string | null; finishedAt?: string | null }) =>
  run.startedAt ? duration(new Date(run.finishedAt ?? Date.now()).getTime() - new Date(run.startedAt).getTime()) : '—';

export default function Overview() {
  const { session } = useSession();
  const [{ data, error }] = useQuery({ query: OverviewQuery, requestPolicy: 'cache-and-network' });
  const mayKeys = session.permissions.includes('keys');
  const [keys] = useQuery({ query: KeysQuery, pause: !mayKeys, requestPolicy: 'cache-and-network' });
  const spent = useSpend(!session.permissions.includes('billing'));
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  const { viewer, recent } = data;
  const succeeded = recent.nodes.find((r) => r.status === 'SUCCEEDED')?.id;
  return (
    <Stack>
      <PageTitle title="Overview" />
      <TrialPrompt />
      {mayKeys && keys.data && (
        <Checklist
          keys={keys.data.viewer.apiKeys}
          downloaded={Boolean(keys.data.viewer.firstDownloadAt)}
          runs={recent.totalCount}
          succeeded={succeeded}
        />
      )}
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }}>
        <Card withBorder>
          <Title order={3} size="h5">
            Wallet
          </Title>
          <Text size="xl" fw={700}>
            <Money amount={viewer.wallet.totalBalance} />
          </Text>
          <Text size="sm">
            Plan credits <Money amount={viewer.wallet.balance} />
          </Text>
          <Text size="sm">
            Purchased credits <Money amount={viewer.wallet.purchasedCredits} />
          </Text>
          {viewer.wallet.held && Number(viewer.wallet.held) > 0 && (
            <Text size="sm">
              Held by running runs <Money amount={viewer.wallet.held} />
            </Text>
          )}
        </Card>
        <Card withBorder>
          <Title order={3} size="h5">
            Plan
          </Title>
          <Text size="xl" fw={700}>
            {word(PLAN_WORDS, viewer.plan)}
          </Text>
          <Text size="sm">
            Subscription: {word(SUBSCRIPTION_STATUS_WORDS, viewer.subscriptionStatus).toLowerCase()}
          </Text>
        </Card>
        <SpendCard spent={spent} wallet={viewer.wallet} />
        <Card withBorder>
          <Title order={3} size="h5">
            Today’s allowances
          </Title>
          {viewer.allowancesToday.map((a) => {
            const label = word(ALLOWANCE_KIND_WORDS, a.kind);
            return (
              <div key={a.kind}>
                <Text size="sm">
                  {label}: {count(a.used)} of {count(a.limit)}
                </Text>
                <Progress
                  value={a.limit > 0 ? (a.used / a.limit) * 100 : 0}
                  aria-label={`${label} used today`}
                  size="sm"
                  mb="xs"
                />
              </div>
            );
          })}
          <Text size="xs" c="dimmed">
            Resets <Ago iso={viewer.allowancesToday[0]?.resetsAt} />.
          </Text>
        </Card>
      </SimpleGrid>
      <Group justify="space-between">
        <Title order={3}>Recent runs</Title>
        {recent.totalCount > recent.nodes.length && (
          <Anchor component={Link} to="/runs" size="sm">
            All {count(recent.totalCount)} runs
          </Anchor>
        )}
      </Group>
      {recent.nodes.length === 0 ? (
        <Text>
          No run yet. <Link to="/tools">Choose a tool</Link> and start one: its rows show up live on its page.
        </Text>
      ) : (
        <TableScroll label="Recent runs" minWidth={640}>
          <Table
            aria-label="Recent runs"
            data={{
              head: ['Run', 'Tool', 'Status', 'Rows', 'Cost', 'Took', 'Started'],
              body: recent.nodes.map((run) => [
                <Link key="run" to={`/runs/${run.id}`}>
                  {run.id}
                </Link>,
                word(TOOL_WORDS, run.tool),
                <Group key="status" gap="xs" wrap="nowrap">
                  <StatusBadge status={run.status} />
                  {run.statusMessage && <Text size="sm">{run.statusMessage}</Text>}
                </Group>,
                count(run.itemCount),
                <Money key="cost" amount={run.cost} />,
                runTime(run),
                <Ago key="started" iso={run.createdAt} />,
              ]),
            }}
          />
        </TableScroll>
      )}
    </Stack>
  );
}
