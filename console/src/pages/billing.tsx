import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { Alert, Button, Card, Group, SegmentedControl, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useClient, useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { ConsoleCreditQuoteQuery, ConsoleStatementQuery } from '../gql/graphql.ts';
import {
  Ago,
  ConfirmModal,
  Loading,
  Money,
  Pager,
  QueryError,
  TableScroll,
  usePages,
  UserErrors,
} from '../components.tsx';
import { PlanPicker } from '../plans.tsx';
import { PageTitle } from '../Shell.tsx';
import {
  LEDGER_KIND_WORDS,
  PLAN_WORDS,
  STATEMENT_LINE_KIND_WORDS,
  SUBSCRIPTION_STATUS_WORDS,
  TOOL_WORDS,
  usd,
  word,
} from '../lib/format.ts';

const BillingQuery = graphql(`
  query ConsoleBilling {
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
    }
  }
`);

/** The ledger a line a run (or pipeline), with the balance after each line. */
const StatementQuery = graphql(`
  query ConsoleStatement($after: String) {
    viewer {
      id
      statement(first: 20, after: $after) {
        pageInfo {
          hasNextPage
          endCursor
        }
        nodes {
          kind
          amount
          balance
          held
          charged
          stillHeld
          runId
          pipelineId
          run {
            id
            tool
          }
          note
          at
        }
      }
    }
  }
`);

/** Every ledger entry, as the API lists them. */
const LedgerQuery = graphql(`
  query ConsoleLedger($after: String) {
    viewer {
      id
      ledger(first: 20, after: $after) {
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

type Line = NonNullable<ConsoleStatementQuery['viewer']['statement']>['nodes'][number];

/** What a statement line was, in words, with a link to its run or pipeline. */
function LineWhat({ line }: { line: Line }) {
  if (line.kind === 'RUN' && line.runId)
    return (
      <>
        {line.run ? word(TOOL_WORDS, line.run.tool) : 'Run'} <Link to={`/runs/${line.runId}`}>{line.runId}</Link>
      </>
    );
  if (line.kind === 'PIPELINE' && line.pipelineId)
    return (
      <>
        Pipeline <Link to={`/pipelines/${line.pipelineId}`}>{line.pipelineId}</Link>
      </>
    );
  return (
    <>
      {word(STATEMENT_LINE_KIND_WORDS, line.kind)}
      {line.note ? ` · ${line.note}` : ''}
    </>
  );
}

/** How a run's or pipeline's money moved, in words: charged, or still held while it goes. */
function LineDetail({ line }: { line: Line }) {
  if (line.kind !== 'RUN' && line.kind !== 'PIPELINE') return null;
  if (Number(line.stillHeld) > 0)
    return (
      <>
        Holding <Money amount={line.stillHeld} /> while it runs
      </>
    );
  return (
    <>
      Charged <Money amount={line.charged} /> (held <Money amount={line.held} />, the rest given back)
    </>
  );
}

function Statement() {
  const pages = usePages();
  const [{ data, error }] = useQuery({
    query: StatementQuery,
    variables: { after: pages.after },
    requestPolicy: 'cache-and-network',
  });
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  const { statement } = data.viewer;
  if (statement.nodes.length === 0) return <Text size="sm">No money has moved yet: runs and purchases show here.</Text>;
  return (
    <>
      <TableScroll label="Statement" minWidth={720}>
        <Table
          aria-label="Statement"
          data={{
            head: ['When', 'What', 'Detail', 'Amount', 'Balance'],
            body: statement.nodes.map((line) => [
              <Ago key="at" iso={line.at} />,
              <LineWhat key="what" line={line} />,
              <LineDetail key="detail" line={line} />,
              <Money key="amount" amount={line.amount} />,
              <Money key="balance" amount={line.balance} />,
            ]),
          }}
        />
      </TableScroll>
      <Pager pages={pages} pageInfo={statement.pageInfo} />
    </>
  );
}

function Entries() {
  const pages = usePages();
  const [{ data, error }] = useQuery({
    query: LedgerQuery,
    variables: { after: pages.after },
    requestPolicy: 'cache-and-network',
  });
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  const { ledger } = data.viewer;
  return (
    <>
      <TableScroll label="Ledger" minWidth={720}>
        <Table
          aria-label="Ledger"
          data={{
            head: ['When', 'Kind', 'Amount', 'Run', 'Note'],
            body: ledger.nodes.map((entry) => [
              <Ago key="at" iso={entry.createdAt} />,
              word(LEDGER_KIND_WORDS, entry.kind),
              <Money key="amount" amount={entry.amount} />,
              entry.runId ? (
                <Link key="run" to={`/runs/${entry.runId}`}>
                  {entry.runId}
                </Link>
              ) : (
                '—'
              ),
              entry.note ?? '',
            ]),
          }}
        />
      </TableScroll>
      <Pager pages={pages} pageInfo={ledger.pageInfo} />
    </>
  );
}

export default function Billing() {
  const [view, setView] = useState<'statement' | 'entries'>('statement');
  const [{ data, error }, refetch] = useQuery({ query: BillingQuery, requestPolicy: 'cache-and-network' });
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
            {word(PLAN_WORDS, viewer.plan)} ({word(SUBSCRIPTION_STATUS_WORDS, viewer.subscriptionStatus).toLowerCase()})
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
      <Group justify="space-between">
        <Title order={3}>Money in and out</Title>
        <SegmentedControl
          aria-label="Show the money"
          value={view}
          onChange={(value) => setView(value as typeof view)}
          data={[
            { value: 'statement', label: 'By run' },
            { value: 'entries', label: 'Every entry' },
          ]}
        />
      </Group>
      {view === 'statement' ? <Statement /> : <Entries />}
    </Stack>
  );
}
