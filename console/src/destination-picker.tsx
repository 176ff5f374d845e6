import { Checkbox, Group, Text } from '@mantine/core';
import { Link } from 'react-router';
import { graphql } from './gql/index.ts';
import type { DestinationChoiceFragment } from './gql/graphql.ts';

/** "Deliver the rows to": the destinations a start (a tool's, a saved task's, a pipeline's) names. */

// The fields the picker reads of each destination; a page's query spreads it.
graphql(`
  fragment DestinationChoice on Destination {
    id
    name
    paused
  }
`);

export type DestinationChoice = DestinationChoiceFragment;

/** The picker's words for what is delivered: a run's rows, or a pipeline's table. */
const WORDS = {
  run: {
    none: 'To send the rows to a CRM, a sheet or a chat when the run ends,',
    description: 'Destinations the rows go to when the run ends.',
  },
  pipeline: {
    none: 'To send the pipeline’s table to a CRM, a sheet or a chat when it ends,',
    description: 'Destinations the pipeline’s table (its steps’ rows joined) goes to when it ends.',
  },
} as const;

/** The account's destinations to pick from: where the rows go when the run (or the pipeline) ends. */
export function DestinationPicker({
  destinations,
  value,
  error,
  onChange,
  of = 'run',
}: {
  destinations: readonly DestinationChoice[];
  value: string[];
  error?: string;
  onChange(value: string[]): void;
  /** What is delivered: a run's rows (the default) or a pipeline's table. */
  of?: keyof typeof WORDS;
}) {
  const words = WORDS[of];
  if (destinations.length === 0)
    return (
      <Text size="sm" c="dimmed">
        {words.none} <Link to="/destinations">make a destination</Link>.
      </Text>
    );
  return (
    <Checkbox.Group
      label="Deliver the rows to"
      description={words.description}
      value={value}
      error={error}
      onChange={onChange}
    >
      <Group mt="xs">
        {destinations.map((d) => (
          <Checkbox key={d.id} value={d.id} label={d.paused ? `${d.name} (paused)` : d.name} />
        ))}
      </Group>
    </Checkbox.Group>
  );
}
