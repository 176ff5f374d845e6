import { useEffect } from 'react';
import { Alert, Badge, Button, Card, Group, List, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { Link, useSearchParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from './gql/index.ts';
import type { Plan } from './gql/graphql.ts';
import { QueryError, UserErrors } from './components.tsx';
import { PLAN_WORDS, usd, usd2, word } from './lib/format.ts';
import { useSession } from './lib/session-context.tsx';

/**
 * Choosing a plan (docs/console.md, Billing): the plans as the API declares them (`Query.plans`:
 * prices, monthly credits, bonus, what each adds), what the trial buys, Stripe Checkout or the demo
 * change, and Stripe's customer portal.
 */

const PlansQuery = graphql(`
  query ConsolePlans {
    plans {
      plan
      price
      monthlyCredits
      creditBonusPercent
      includedPlan
      adds
      current
      choosable
    }
    viewer {
      id
      plan
      subscriptionStatus
      wallet {
        totalBalance
      }
      payments {
        mode
      }
    }
  }
`);

const ChoosePlan = graphql(`
  mutation ConsoleChoosePlan($plan: Plan!) {
    choosePlan(plan: $plan) {
      url
      message
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const OpenBillingPortal = graphql(`
  mutation ConsoleOpenBillingPortal {
    openBillingPortal {
      url
      userErrors {
        code
        field
        message
      }
    }
  }
`);

/** What a trial account has and lacks, in words, from its plan and wallet. */
export function trialText(plan: string, balance: string) {
  return (
    `Your trial has the ${word(PLAN_WORDS, plan).toLowerCase()} plan’s tools, paid from your trial credits ` +
    `(${usd2(balance)} left). Buying credits needs a plan: choose one to buy credits and get monthly plan credits.`
  );
}

/** The plans side by side, each with its figures and a button choosing it; `onChanged` after a change made here. */
export function PlanPicker({ onChanged }: { onChanged(): void }) {
  const [{ data, error }, refetch] = useQuery({ query: PlansQuery, requestPolicy: 'cache-and-network' });
  const [chosen, choose] = useMutation(ChoosePlan);
  const [portal, openPortal] = useMutation(OpenBillingPortal);
  const [params] = useSearchParams();
  const checkout = params.get('checkout');
  const status = data?.viewer.subscriptionStatus;
  // Back from Checkout: Stripe's events change the plan within seconds; look again until they have.
  useEffect(() => {
    if (checkout !== 'complete' || status === 'ACTIVE') return;
    const timer = setInterval(() => {
      refetch({ requestPolicy: 'network-only' });
      onChanged();
    }, 1500);
    return () => clearInterval(timer);
  }, [checkout, status, refetch, onChanged]);
  if (error) return <QueryError error={error} />;
  if (!data) return null;
  const { viewer, plans } = data;
  const mode = viewer.payments.mode;
  const pick = async (plan: Plan) => {
    const result = await choose({ plan });
    const url = result.data?.choosePlan.url;
    if (url) return window.location.assign(url);
    refetch({ requestPolicy: 'network-only' });
    onChanged();
  };
  const manage = async () => {
    const url = (await openPortal({})).data?.openBillingPortal.url;
    if (url) window.location.assign(url);
  };
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={3}>Plan</Title>
        {mode === 'STRIPE' && (
          <Button variant="default" onClick={() => void manage()} loading={portal.fetching}>
            Manage billing
          </Button>
        )}
      </Group>
      {viewer.subscriptionStatus === 'TRIAL' && (
        <Alert color="blue" title="You are on a trial">
          {trialText(viewer.plan, viewer.wallet.totalBalance)}
        </Alert>
      )}
      {checkout === 'complete' && (
        <Alert color={status === 'ACTIVE' ? 'green' : 'blue'} role="status">
          {status === 'ACTIVE'
            ? `Payment received: the account is on the ${word(PLAN_WORDS, viewer.plan).toLowerCase()} plan.`
            : 'Payment received; waiting for Stripe to confirm the subscription…'}
        </Alert>
      )}
      {checkout === 'cancelled' && (
        <Alert color="gray" role="status">
          Checkout was cancelled: nothing was charged and the plan is unchanged.
        </Alert>
      )}
      {mode === 'DEMO' && <Text size="sm">Demo mode: choosing a plan changes it at once, without payment.</Text>}
      {mode === 'NONE' && (
        <Text size="sm">This server takes no payments: the operator sets plans and grants credits.</Text>
      )}
      <SimpleGrid cols={{ base: 1, sm: 3 }} role="list" aria-label="Plans">
        {plans.map((offer) => {
          const name = word(PLAN_WORDS, offer.plan);
          const active = offer.current && viewer.subscriptionStatus === 'ACTIVE';
          return (
            <Card withBorder key={offer.plan} role="listitem" aria-label={`${name} plan`}>
              <Stack gap="xs">
                <Group justify="space-between">
                  <Title order={4}>{name}</Title>
                  {offer.current && (
                    <Badge variant="light" tt="none">
                      {active ? 'Your plan' : 'Your trial'}
                    </Badge>
                  )}
                </Group>
                <Text fw={700}>
                  <span title={usd(offer.price)}>{usd2(offer.price)}</span> a month
                </Text>
                <Text size="sm">{usd2(offer.monthlyCredits)} of plan credits each paid month</Text>
                <Text size="sm">
                  {offer.creditBonusPercent > 0
                    ? `${offer.creditBonusPercent}% bonus on credits you buy`
                    : 'No bonus on credits you buy'}
                </Text>
                <Text size="sm">
                  {offer.includedPlan ? `Everything in ${word(PLAN_WORDS, offer.includedPlan)}, and:` : 'Includes:'}
                </Text>
                <List size="sm">
                  {offer.adds.map((what) => (
                    <List.Item key={what}>{what}</List.Item>
                  ))}
                </List>
                {!active && (
                  <Button
                    onClick={() => void pick(offer.plan)}
                    disabled={!offer.choosable}
                    loading={chosen.fetching && chosen.operation?.variables.plan === offer.plan}
                    aria-label={`Choose the ${name.toLowerCase()} plan`}
                  >
                    Choose {name}
                  </Button>
                )}
              </Stack>
            </Card>
          );
        })}
      </SimpleGrid>
      {chosen.data?.choosePlan.message && !chosen.data.choosePlan.url && (
        <Alert color="green" role="status">
          {chosen.data.choosePlan.message}
        </Alert>
      )}
      <UserErrors
        errors={[...(chosen.data?.choosePlan.userErrors ?? []), ...(portal.data?.openBillingPortal.userErrors ?? [])]}
      />
      {chosen.error && <QueryError error={chosen.error} />}
      {portal.error && <QueryError error={portal.error} />}
    </Stack>
  );
}

/** On the overview of a trial account: what the trial buys and the way to a plan. */
export function TrialPrompt() {
  const { session } = useSession();
  const [{ data }] = useQuery({ query: PlansQuery, requestPolicy: 'cache-and-network' });
  if (data?.viewer.subscriptionStatus !== 'TRIAL') return null;
  const owner = session.permissions.includes('billing');
  return (
    <Alert color="blue" title="Choose a plan">
      <Stack gap="xs" align="flex-start">
        <Text size="sm">{trialText(data.viewer.plan, data.viewer.wallet.totalBalance)}</Text>
        {owner ? (
          <Button component={Link} to="/billing" size="xs">
            See the plans
          </Button>
        ) : (
          <Text size="sm">The account’s owner chooses the plan on the Billing page.</Text>
        )}
      </Stack>
    </Alert>
  );
}
