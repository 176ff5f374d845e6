import type { ReactNode } from 'react';
import { Alert, Badge, Center, Loader } from '@mantine/core';
import type { CombinedError } from 'urql';

export const Loading = () => (
  <Center p="xl">
    <Loader role="status" aria-label="Loading" />
  </Center>
);

/** A query's failure, with the API's code when it has one. */
export function QueryError({ error }: { error: CombinedError }) {
  const codes = error.graphQLErrors.map((e) => e.extensions?.code).filter(Boolean);
  return (
    <Alert color="red" role="alert" title="Could not load">
      {error.graphQLErrors[0]?.message ?? error.message}
      {codes.length > 0 && ` (${codes.join(', ')})`}
    </Alert>
  );
}

const STATUS_COLOR: Record<string, string> = {
  RUNNING: 'blue',
  READY: 'gray',
  SUCCEEDED: 'green',
  FAILED: 'red',
  ABORTING: 'orange',
  ABORTED: 'orange',
  TIMED_OUT: 'orange',
};

export const StatusBadge = ({ status }: { status: string }) => (
  <Badge color={STATUS_COLOR[status] ?? 'gray'} variant="light">
    {status}
  </Badge>
);

/** Errors a mutation answered as userErrors, for a banner. */
export function UserErrors({
  errors,
  children,
}: {
  errors: readonly { message: string; field?: readonly string[] | null }[];
  children?: ReactNode;
}) {
  if (errors.length === 0) return null;
  return (
    <Alert color="red" role="alert" title="Not done">
      {errors.map((e, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the errors of one answer, replaced as a whole and never reordered
        <div key={i}>{e.message}</div>
      ))}
      {children}
    </Alert>
  );
}
