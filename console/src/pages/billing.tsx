import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { Alert, Button, Card, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useClient, useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { ConsoleCreditQuoteQuery } from '../gql/graphql.ts';
import { ConfirmModal, Loading, Pager, QueryError, usePages, UserErrors } from '../components.tsx';
import { PlanPicker } from '../plans.tsx';
import { PageTitle } from '../Shell.tsx';
import { usd, when } from '../lib/format.ts';

const BillingQuery = graphql(`
  query ConsoleBilling($after: String) {
    viewer {
      id
      plan
      subscriptionStatus
      payments {
        mode
      }
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

function BuyForm({ onBought, mode, trial }: { onBought(): void; mode: string; trial: boolean }) {
  const client = useClient();
  const [amount, setAmount] = useState('100');
  const [confirming, setConfirming] = useState(false);
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
  // A purchase is confirmed in a modal first: what is paid, how, and what is credited.
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setConfirming(true);
  };
  const confirmed = async () => {
    const result = await buy({ amount: amount.trim() });
    setConfirming(false);
    if (result.data?.buyCredits.purchase) onBought();
  };
  const how =
    mode === 'STRIPE'
      ? 'It is charged to the card on file (Manage billing changes it).'
      : 'Demo mode: it is recorded without payment.';
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
        {trial && <Text size="sm">Buying credits needs an active plan: choose one above.</Text>}
        <Group>
          <Button type="submit" loading={bought.fetching} disabled={!quote.quote || trial}>
            Buy credits
          </Button>
        </Group>
        {quote.quote && (
          <ConfirmModal
            opened={confirming}
            title="Buy credits?"
            confirm={`Pay ${usd(quote.quote.amount)}`}
            loading={bought.fetching}
            onConfirm={() => void confirmed()}
            onClose={() => setConfirming(false)}
          >
            <Text>
              You pay {usd(quote.quote.amount)} and {usd(quote.quote.credited)} of credits are added to the wallet.
            </Text>
            <Text size="sm">{how} Purchased credits never expire.</Text>
          </ConfirmModal>
        )}
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
  const pages = usePages();
  const [{ data, error }, refetch] = useQuery({
    query: BillingQuery,
    variables: { after: pages.after },
    requestPolicy: 'cache-and-network',
  });
  const reload = useCallback(() => refetch({ requestPolicy: 'network-only' }), [refetch]);
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
      <PlanPicker onChanged={reload} />
      <Title order={3}>Buy credits</Title>
      <BuyForm onBought={reload} mode={viewer.payments.mode} trial={viewer.subscriptionStatus !== 'ACTIVE'} />
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
      <Pager pages={pages} pageInfo={viewer.ledger.pageInfo} />
    </Stack>
  );
}
