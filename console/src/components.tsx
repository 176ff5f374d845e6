import { useCallback, useRef, useState, type ReactNode } from 'react';
import { Alert, Badge, Button, Center, Group, Loader, Modal, Stack, Table, Text } from '@mantine/core';
import type { CombinedError, OperationResult } from 'urql';
import type { DownloadFormat } from './gql/graphql.ts';
import { DownloadFormatDescriptions } from './gql/enum-descriptions.ts';
import { ago, RUN_STATUS_HINTS, RUN_STATUS_WORDS, usd, usd2, when, word } from './lib/format.ts';

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

/** A run's, pipeline's or delivery's status in words (“Timed out”), what it means on hover. */
export const StatusBadge = ({ status }: { status: string }) => (
  <Badge color={STATUS_COLOR[status] ?? 'gray'} variant="light" tt="none" title={RUN_STATUS_HINTS[status]}>
    {word(RUN_STATUS_WORDS, status)}
  </Badge>
);

/**
 * A wide table's frame: below `minWidth` the table scrolls sideways inside it (never the page), and the
 * frame takes focus so a keyboard can scroll it too.
 */
export const TableScroll = ({
  label,
  minWidth,
  children,
}: {
  label: string;
  minWidth: number;
  children: ReactNode;
}) => (
  <Table.ScrollContainer
    type="native"
    minWidth={minWidth}
    className="scroll-x"
    tabIndex={0}
    role="region"
    aria-label={`${label}, scrollable`}
  >
    {children}
  </Table.ScrollContainer>
);

/** An amount in a list or a card: 2 decimals, the exact amount on hover. */
export const Money = ({ amount }: { amount: string | null | undefined }) =>
  amount == null ? '—' : <span title={usd(amount)}>{usd2(amount)}</span>;

/** A time relative to now (“3 minutes ago”), the exact time on hover. */
export const Ago = ({ iso }: { iso: string | null | undefined }) =>
  iso ? (
    <time dateTime={iso} title={when(iso)}>
      {ago(iso)}
    </time>
  ) : (
    '—'
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
export type FileFormat = DownloadFormat;

/** Every format of the API's downloads, in the schema's order (CSV, JSON, NDJSON, XLSX). */
export const FILE_FORMATS = Object.keys(DownloadFormatDescriptions) as FileFormat[];

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

/**
 * A question before an action that costs money or cannot be undone, as a Mantine modal (a dialog named
 * by its title) rather than `window.confirm()`: `confirm` names the action, `color` red for removals.
 */
export function ConfirmModal({
  opened,
  title,
  children,
  confirm,
  color,
  loading,
  onConfirm,
  onClose,
}: {
  opened: boolean;
  title: string;
  children: ReactNode;
  confirm: string;
  color?: string;
  loading?: boolean;
  onConfirm(): void;
  onClose(): void;
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={title} centered closeButtonProps={{ 'aria-label': 'Close' }}>
      <Stack>
        {children}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color={color} loading={loading} onClick={onConfirm} data-autofocus>
            {confirm}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** What `useConfirm`'s `ask` shows: the question, a sentence on what follows, the action's name. */
export interface Question {
  title: string;
  body: ReactNode;
  confirm: string;
  color?: string;
}

/**
 * `ask(question)` resolves true when the user confirms in a modal (the `ConfirmModal` returned, to
 * render once in the page), false when they cancel or close it: `window.confirm()`'s use, in Mantine.
 */
export function useConfirm(): [ReactNode, (question: Question) => Promise<boolean>] {
  const [question, setQuestion] = useState<Question | null>(null);
  const answer = useRef<(yes: boolean) => void>(() => undefined);
  const ask = useCallback(
    (q: Question) =>
      new Promise<boolean>((resolve) => {
        answer.current = resolve;
        setQuestion(q);
      }),
    [],
  );
  const close = (yes: boolean) => {
    setQuestion(null);
    answer.current(yes);
  };
  const modal = (
    <ConfirmModal
      opened={question !== null}
      title={question?.title ?? ''}
      confirm={question?.confirm ?? 'OK'}
      color={question?.color}
      onConfirm={() => close(true)}
      onClose={() => close(false)}
    >
      <Text>{question?.body}</Text>
    </ConfirmModal>
  );
  return [modal, ask];
}

/**
 * Paging back and forth through a connection (which pages forward only): the cursors of the pages
 * read so far. `after` is the current page's; `reset` starts over (a filter changed).
 */
export function usePages() {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  return {
    after: cursors.at(-1) ?? null,
    /** The current page's number, from 0. */
    index: cursors.length - 1,
    hasPrevious: cursors.length > 1,
    previous: () => setCursors((c) => c.slice(0, -1)),
    next: (endCursor: string | null | undefined) => setCursors((c) => [...c, endCursor ?? null]),
    reset: () => setCursors([null]),
  };
}

/** Previous and Next under a paged table. */
export function Pager({
  pages,
  pageInfo,
}: {
  pages: ReturnType<typeof usePages>;
  pageInfo: { hasNextPage: boolean; endCursor?: string | null };
}) {
  return (
    <Group>
      <Button variant="default" disabled={!pages.hasPrevious} onClick={pages.previous}>
        Previous page
      </Button>
      <Button variant="default" disabled={!pageInfo.hasNextPage} onClick={() => pages.next(pageInfo.endCursor)}>
        Next page
      </Button>
    </Group>
  );
}
