import { useState, type ReactNode } from 'react';
import { Alert, Badge, Button, Center, Group, Loader, Text } from '@mantine/core';
import type { CombinedError, OperationResult } from 'urql';

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
  QUEUED: 'gray',
  WAITING: 'yellow',
  PAUSED: 'orange',
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

/** The formats a signed download link can be asked for, as the API names them. */
export type FileFormat = 'CSV' | 'JSON' | 'NDJSON';

/**
 * One button a format, each downloading a file through a signed link made on click (it lives minutes);
 * the browser downloads it like any file. A path: it resolves against the address this page was opened
 * at, whatever PUBLIC_URL says. `what` names the file in the buttons' accessible names when a page has
 * several sets of them (“Download dentists as CSV”); `verb` is what the buttons say (default Download).
 */
export function DownloadButtons({
  formats,
  linkOf,
  what,
  verb = 'Download',
}: {
  formats: readonly FileFormat[];
  /**
   * The query (or mutation) answering the signed path for a format, how to read the path from its data,
   * and why there is none when the answer says (a mutation's userErrors).
   */
  linkOf(format: FileFormat): Promise<{ path: string | null | undefined; result: OperationResult; refused?: string }>;
  what?: string;
  verb?: string;
}) {
  const [error, setError] = useState<string | null>(null);
  const download = async (format: FileFormat) => {
    setError(null);
    const { path, result, refused } = await linkOf(format);
    if (!path) return setError(refused ?? result.error?.graphQLErrors[0]?.message ?? 'The file is not available.');
    const link = document.createElement('a');
    link.href = path;
    link.download = '';
    document.body.append(link);
    link.click();
    link.remove();
  };
  return (
    <Group gap="xs">
      {formats.map((format) => (
        <Button
          key={format}
          variant="light"
          size={what ? 'xs' : undefined}
          aria-label={what ? `${verb} ${what} as ${format}` : undefined}
          onClick={() => void download(format)}
        >
          {verb} {format}
        </Button>
      ))}
      {error && (
        <Text c="red" role="alert">
          {error}
        </Text>
      )}
    </Group>
  );
}
