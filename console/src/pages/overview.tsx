import { Card, Group, Progress, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import { Loading, QueryError, StatusBadge } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { count, usd, when } from '../lib/format.ts';

const OverviewQuery = graphql(`
  query ConsoleOverview {
    viewer {
      id
      name
      plan
      subscriptionStatus
      wallet {
        balance
        purchasedCredits
        totalBalance
      }
      allowancesToday {
        kind
        limit
        used
        remaining
        resetsAt
      }
    }
    running: runs(status: RUNNING, first: 20) {
      totalCount
      nodes {
        ...RunLine
      }
    }
    ready: runs(status: READY, first: 20) {
      totalCount
      nodes {
        ...RunLine
      }
    }
  }
  fragment RunLine on Run {
    id
    tool
    status
    statusMessage
    itemCount
    createdAt
  }
`);

const ALLOWANCE_LABEL: Record<string, string> = { DATABASE: 'Database records', ENRICHMENT: 'Enrichment matches' };

export default function Overview() {
  const [{ data, error, fetching }] = useQuery({ query: OverviewQuery, requestPolicy: 'cache-and-network' });
  if (error) return <QueryError error={error} />;
  if (!data || (fetching && !data)) return <Loading />;
  const { viewer, running, ready } = data;
  const runs = [...running.nodes, ...ready.nodes];
  return (
    <Stack>
      <PageTitle title="Overview" />
      <SimpleGrid cols={{ base: 1, md: 3 }}>
        <Card withBorder>
          <Title order={3} size="h5">
            Wallet
          </Title>
          <Text size="xl" fw={700}>
            {usd(viewer.wallet.totalBalance)}
          </Text>
          <Text size="sm">Plan credits {usd(viewer.wallet.balance)}</Text>
          <Text size="sm">Purchased credits {usd(viewer.wallet.purchasedCredits)}</Text>
        </Card>
        <Card withBorder>
          <Title order={3} size="h5">
            Plan
          </Title>
          <Text size="xl" fw={700}>
            {viewer.plan.toLowerCase()}
          </Text>
          <Text size="sm">Subscription {viewer.subscriptionStatus.toLowerCase()}</Text>
        </Card>
        <Card withBorder>
          <Title order={3} size="h5">
            Today’s allowances
          </Title>
          {viewer.allowancesToday.map((a) => (
            <div key={a.kind}>
              <Text size="sm">
                {ALLOWANCE_LABEL[a.kind]}: {count(a.used)} of {count(a.limit)}
              </Text>
              <Progress
                value={(a.used / a.limit) * 100}
                aria-label={`${ALLOWANCE_LABEL[a.kind]} used today`}
                size="sm"
                mb="xs"
              />
            </div>
          ))}
        </Card>
      </SimpleGrid>
      <Title order={3}>
        Runs in flight ({running.totalCount} running, {ready.totalCount} waiting)
      </Title>
      {runs.length === 0 ? (
        <Text c="dimmed">
          No run is running or waiting. <Link to="/tools">Start one from a tool.</Link>
        </Text>
      ) : (
        <Table
          data={{
            head: ['Run', 'Tool', 'Status', 'Rows', 'Started'],
            body: runs.map((run) => [
              <Link key="run" to={`/runs/${run.id}`}>
                {run.id}
              </Link>,
              run.tool,
              <Group key="status" gap="xs">
                <StatusBadge status={run.status} />
                <Text size="sm">{run.statusMessage}</Text>
              </Group>,
              count(run.itemCount),
              when(run.createdAt),
            ]),
          }}
        />
      )}
    </Stack>
  );
}
