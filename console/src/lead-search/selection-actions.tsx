import { Alert, Button, Checkbox, Group, Modal, Stack, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { useMutation } from 'urql';
import { useConfirm } from '../components.tsx';
import { graphql } from '../gql/index.ts';
import { csvOf } from '../lib/csv.ts';
import { count, usd2 } from '../lib/format.ts';
import { costOf, type PreviewPerson, type RevealedPerson } from './documents.ts';

/** The most people one export reveals (each new one is a record of the daily allowance). */
export const EXPORT_MAX = 1000;
/** People a reveal takes at once (revealLeads' limit). */
const REVEAL_BATCH = 100;

const FindContacts = graphql(`
  mutation ConsoleFindContacts($input: StartWebsiteFinderInput!, $dryRun: Boolean) {
    startWebsiteFinder(input: $input, dryRun: $dryRun) {
      run {
        id
      }
      estimatedCost
      userErrors {
        field
        message
      }
    }
  }
`);

/** The same, then each email found validated: a pipeline of the two, under one quote and one hold. */
const QuoteContactsPipeline = graphql(`
  mutation ConsoleQuoteContactsPipeline($input: StartPipelineInput!) {
    quotePipeline(input: $input) {
      quote {
        estimatedCost
      }
      userErrors {
        field
        message
      }
    }
  }
`);

const StartContactsPipeline = graphql(`
  mutation ConsoleStartContactsPipeline($input: StartPipelineInput!) {
    startPipeline(input: $input) {
      pipeline {
        id
      }
      userErrors {
        field
        message
      }
    }
  }
`);

const people = (n: number) => `${count(n)} ${n === 1 ? 'person' : 'people'}`;

/** What revealing the selection costs, in the words the confirmation and the bar use. */
export function costText(selected: readonly Pick<PreviewPerson, 'received'>[], remaining: number): string {
  const cost = costOf(selected);
  const free = selected.length - cost;
  return (
    `Exporting ${people(selected.length)} uses ${count(cost)} of your ${count(remaining)} records left today` +
    (free > 0 ? ` (${people(free)} you have exported before cost nothing).` : '.')
  );
}

const csvRow = (lead: RevealedPerson) => ({
  name: lead.fullName,
  title: lead.title,
  seniority: lead.seniority,
  department: lead.department,
  email: lead.email,
  email_status: lead.emailStatus,
  phone: lead.phone,
  mobile: lead.mobile,
  city: lead.city,
  state: lead.state,
  country: lead.country,
  linkedin: lead.linkedinUrl,
  company: lead.company?.name,
  domain: lead.company?.domain,
  industry: lead.company?.industry,
  company_size: lead.company?.size,
});

function download(text: string, name: string) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  link.download = name;
  link.click();
  URL.revokeObjectURL(link.href);
}

/**
 * What can be done with the selected people: export them as CSV (the metered reveal, its cost stated
 * in a confirmation first), hand them to the enrichment page, or find more contacts at their companies
 * (a website-finder run over their domains, quoted first).
 */
export function SelectionActions({
  selected,
  remaining,
  reveal,
  onClear,
}: {
  selected: PreviewPerson[];
  remaining: number;
  reveal(ids: string[]): Promise<RevealedPerson[] | { error: string }>;
  onClear(): void;
}) {
  const navigate = useNavigate();
  const [confirmModal, ask] = useConfirm();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [finding, setFinding] = useState(false);
  const cost = costOf(selected);
  const tooMany = cost > remaining;
  const domains = [...new Set(selected.flatMap((p) => (p.company?.domain ? [p.company.domain] : [])))];

  const exportCsv = async () => {
    setProblem(null);
    const yes = await ask({
      title: `Export ${people(selected.length)}?`,
      body: `${costText(selected, remaining)} The file has their emails and phone numbers.`,
      confirm: 'Export CSV',
    });
    if (!yes) return;
    setBusy(true);
    try {
      const rows: RevealedPerson[] = [];
      for (let i = 0; i < selected.length; i += REVEAL_BATCH) {
        const answer = await reveal(selected.slice(i, i + REVEAL_BATCH).map((p) => p.id));
        if ('error' in answer) {
          setProblem(answer.error);
          break;
        }
        rows.push(...answer);
      }
      if (rows.length > 0) download(csvOf(rows.map(csvRow)), 'leads.csv');
    } finally {
      setBusy(false);
    }
  };

  // The selection goes to the enrichment page as a file would: a header line and a row a person, whose
  // columns the page maps as it maps an upload's (what a preview holds: no contact details).
  const enrich = () =>
    navigate('/enrichment', {
      state: {
        enrichFile: {
          name: `lead search (${people(selected.length)})`,
          headers: ['Full name', 'LinkedIn URL', 'Company name', 'Company domain'],
          rows: selected.map((p) => ({
            'Full name': p.fullName ?? '',
            'LinkedIn URL': p.linkedinUrl ?? '',
            'Company name': p.company?.name ?? '',
            'Company domain': p.company?.domain ?? '',
          })),
        },
      },
    });

  return (
    <Stack gap="xs" component="section" aria-label="Selected people">
      {confirmModal}
      <Group gap="xs">
        <Text fw={500}>{people(selected.length)} selected</Text>
        <Button
          size="sm"
          onClick={() => void exportCsv()}
          loading={busy}
          disabled={tooMany || selected.length > EXPORT_MAX}
        >
          Export CSV
        </Button>
        <Button size="sm" variant="light" onClick={enrich}>
          Enrich
        </Button>
        <Button size="sm" variant="light" disabled={domains.length === 0} onClick={() => setFinding(true)}>
          Find contacts at their companies
        </Button>
        <Button size="sm" variant="subtle" onClick={onClear}>
          Clear selection
        </Button>
      </Group>
      <Text size="sm">
        {tooMany
          ? `Exporting them needs ${count(cost)} records; ${count(remaining)} are left today. Select fewer people.`
          : selected.length > EXPORT_MAX
            ? `One export takes ${count(EXPORT_MAX)} people at most. Select fewer people.`
            : costText(selected, remaining)}
      </Text>
      {problem && (
        <Alert color="red" role="alert" title="Not exported">
          {problem}
        </Alert>
      )}
      <FindContactsModal opened={finding} domains={domains} onClose={() => setFinding(false)} />
    </Stack>
  );
}

/**
 * A website-finder run over the selected companies' domains: a job title, the quote, then Start; or, with
 * "Then validate", a pipeline of the finder and the email validator, quoted and held as one.
 */
function FindContactsModal({ opened, domains, onClose }: { opened: boolean; domains: string[]; onClose(): void }) {
  const navigate = useNavigate();
  const [, start] = useMutation(FindContacts);
  const [, quotePipeline] = useMutation(QuoteContactsPipeline);
  const [, startPipeline] = useMutation(StartContactsPipeline);
  const [jobTitle, setJobTitle] = useState('');
  const [validate, setValidate] = useState(false);
  const [quote, setQuote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const pipelineInput = () => ({
    steps: [{ tool: 'WEBSITE_FINDER' as const, input: { domains, jobTitle } }, { tool: 'EMAIL_VALIDATOR' as const }],
  });
  const runPipeline = async (quoting: boolean) => {
    if (quoting) {
      const answer = await quotePipeline({ input: pipelineInput() });
      const refused = answer.data?.quotePipeline.userErrors[0]?.message ?? answer.error?.message;
      if (refused) return setError(refused);
      return setQuote(answer.data?.quotePipeline.quote?.estimatedCost ?? null);
    }
    const answer = await startPipeline({ input: pipelineInput() });
    const refused = answer.data?.startPipeline.userErrors[0]?.message ?? answer.error?.message;
    if (refused) return setError(refused);
    if (answer.data?.startPipeline.pipeline) navigate(`/pipelines/${answer.data.startPipeline.pipeline.id}`);
  };
  const runFinder = async (dryRun: boolean) => {
    const answer = await start({ input: { domains, jobTitle }, dryRun });
    const payload = answer.data?.startWebsiteFinder;
    const refused = payload?.userErrors[0]?.message ?? answer.error?.message;
    if (refused) return setError(refused);
    if (dryRun) setQuote(payload?.estimatedCost ?? null);
    else if (payload?.run) navigate(`/runs/${payload.run.id}`);
  };
  const run = async (quoting: boolean) => {
    setBusy(true);
    setError(null);
    try {
      await (validate ? runPipeline(quoting) : runFinder(quoting));
    } finally {
      setBusy(false);
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(quote === null);
  };
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      title="Find contacts at their companies"
      centered
      closeButtonProps={{ 'aria-label': 'Close' }}
    >
      <form onSubmit={submit}>
        <Stack>
          <Text size="sm">
            The domain email finder searches the websites of {count(domains.length)}{' '}
            {domains.length === 1 ? 'company' : 'companies'} ({domains.slice(0, 3).join(', ')}
            {domains.length > 3 ? '…' : ''}) for people with a job title, and merges what it finds with the lead
            database. It is a run, paid from the wallet per contact found.
          </Text>
          <TextInput
            label="Job title"
            placeholder="CEO"
            value={jobTitle}
            error={error}
            onChange={(e) => {
              setJobTitle(e.currentTarget.value);
              setQuote(null);
            }}
          />
          <Checkbox
            label="Then validate the emails found (a pipeline of both, under one quote)"
            checked={validate}
            onChange={(e) => {
              setValidate(e.currentTarget.checked);
              setQuote(null);
            }}
          />
          {quote !== null && (
            <Text>
              At most {usd2(quote)} is held from the wallet;{' '}
              {validate ? 'each step is billed for what it does.' : 'the run is billed per contact found.'}
            </Text>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={busy} disabled={jobTitle.trim() === ''}>
              {quote === null ? 'Quote' : validate ? 'Start the pipeline' : 'Start the run'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
