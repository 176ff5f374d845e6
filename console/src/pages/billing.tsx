import { useEffect, useState, type FormEvent } from 'react';
import { Alert, Button, Card, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useClient, useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { ConsoleCreditQuoteQuery } from '../gql/graphql.ts';
import { Loading, QueryError, UserErrors } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { usd, when } from '../lib/format.ts';

const BillingQuery = graphql(`
  query ConsoleBilling($after: String) {
    viewer {
      id
      plan
      subscriptionStatus
      wallet {
        balance
        purchasedCredits
        totalBalance
      }
      ledger(first: 20, after: $after) {
        totalCount
        pageInfo {
          hasNextPage
          endCursor
        }
        nodes {
          id
          kind
          amount
          runId
          note
          createdAt
        }
      }
    }
  }
`);

const QuoteQuery = graphql(`
  query ConsoleCreditQuote($amount: Money!) {
    creditQuote(amount: $amount) {
      originalAmount
      amount
      wasAdjusted
      bonusPercent
      bonus
      credited
    }
  }
`);

const BuyCredits = graphql(`
  mutation ConsoleBuyCredits($amount: Money!) {
    buyCredits(amount: $amount) {
      purchase {
        message
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

type Quote = NonNullable<ConsoleCreditQuoteQuery['creditQuote']>;

function BuyForm({ onBought }: { onBought(): void }) {
  const client = useClient();
  const [amount, setAmount] = useState('100');
  const [quote, setQuote] = useState<{ quote?: Quote; error?: string }>({});
  const [bought, buy] = useMutation(BuyCredits);
  // The quote follows the amount: what would be charged and credited, before paying.
  useEffect(() => {
    let current = true;
    const timer = setTimeout(async () => {
      const result = await client
        .query(QuoteQuery, { amount: amount.trim() || '0' }, { requestPolicy: 'network-only' })
        .toPromise();
      if (current)
        setQuote(
          result.data?.creditQuote
            ? { quote: result.data.creditQuote }
            : { error: result.error?.graphQLErrors[0]?.message ?? result.error?.message },
        );
    }, 250);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [amount, client]);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await buy({ amount: amount.trim() });
    if (result.data?.buyCredits.purchase) onBought();
  };
  return (
    <form onSubmit={submit} aria-label="Buy credits">
      <Stack maw={520}>
        <TextInput
          label="Amount to buy (USD)"
          description="10 to 10,000 USD; purchased credits never expire."
          value={amount}
          onChange={(e) => setAmount(e.currentTarget.value)}
          error={quote.error}
        />
        <div role="status" aria-live="polite" aria-label="Quote">
          {quote.quote && (
            <Text size="sm">
              {quote.quote.wasAdjusted &&
                `${usd(quote.quote.originalAmount)} is adjusted to ${usd(quote.quote.amount)} (it clashes with a subscription price). `}
              You pay {usd(quote.quote.amount)}; your plan adds a {quote.quote.bonusPercent}% bonus of{' '}
              {usd(quote.quote.bonus)}: {usd(quote.quote.credited)} of credits.
            </Text>
          )}
        </div>
        <Group>
          <Button type="submit" loading={bought.fetching} disabled={!quote.quote}>
            Buy credits
          </Button>
        </Group>
        {bought.data?.buyCredits.purchase && (
          <Alert color="green" role="status">
            {bought.data.buyCredits.purchase.message}
          </Alert>
        )}
        <UserErrors errors={bought.data?.buyCredits.userErrors ?? []} />
      </Stack>
    </form>
  );
}

export default function Billing() {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [{ data, error }, refetch] = useQuery({
    query: BillingQuery,
    variables: { after: cursors.at(-1) ?? null },
    requestPolicy: 'cache-and-network',
  });
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  const { viewer } = data;
  return (
    <Stack>
      <PageTitle title="Billing" />
      <Group>
        <Card withBorder>
          <Text size="sm">Plan</Text>
          <Text fw={700}>
            {viewer.plan.toLowerCase()} ({viewer.subscriptionStatus.toLowerCase()})
          </Text>
        </Card>
        <Card withBorder>
          <Text size="sm">Wallet</Text>
          <Text fw={700}>{usd(viewer.wallet.totalBalance)}</Text>
          <Text size="sm">
            Plan {usd(viewer.wallet.balance)} · purchased {usd(viewer.wallet.purchasedCredits)}
          </Text>
        </Card>
      </Group>
      <Title order={3}>Buy credits</Title>
      <BuyForm onBought={() => refetch({ requestPolicy: 'network-only' })} />
      <Title order={3}>Ledger ({viewer.ledger.totalCount} entries)</Title>
      <Table
        aria-label="Ledger"
        data={{
          head: ['When', 'Kind', 'Amount', 'Run', 'Note'],
          body: viewer.ledger.nodes.map((entry) => [
            when(entry.createdAt),
            entry.kind,
            usd(entry.amount),
            entry.runId ?? '—',
            entry.note ?? '',
          ]),
        }}
      />
      <Group>
        <Button variant="default" disabled={cursors.length <= 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
          Previous page
        </Button>
        <Button
          variant="default"
          disabled={!viewer.ledger.pageInfo.hasNextPage}
          onClick={() => setCursors((c) => [...c, viewer.ledger.pageInfo.endCursor ?? null])}
        >
          Next page
        </Button>
      </Group>
    </Stack>
  );
}
