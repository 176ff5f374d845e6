import { Button, Checkbox, Group, NumberInput, SimpleGrid, Stack, TagsInput, TextInput, Title } from '@mantine/core';
import { useEffect, useState } from 'react';
import { useDebouncedValue } from '@mantine/hooks';
import { DEPARTMENT_WORDS, EMAIL_STATUS_WORDS, type Facets, NO_FACETS, setCount } from './filters.ts';
import { useSeniorityWords } from './seniority.ts';

/** A closed vocabulary as a group of checkboxes, each value in words. */
function Choices({
  label,
  words,
  value,
  onChange,
}: {
  label: string;
  words: Readonly<Record<string, string>>;
  value: string[];
  onChange(value: string[]): void;
}) {
  return (
    <Checkbox.Group label={label} value={value} onChange={onChange}>
      <SimpleGrid cols={2} spacing={4} verticalSpacing={4} mt={4}>
        {Object.entries(words).map(([v, w]) => (
          <Checkbox key={v} value={v} label={w} size="xs" />
        ))}
      </SimpleGrid>
    </Checkbox.Group>
  );
}

/** Text that searches once the user pauses typing, so the total follows without a request a key. */
function DebouncedText({
  label,
  value,
  description,
  onChange,
}: {
  label: string;
  value: string;
  description?: string;
  onChange(value: string): void;
}) {
  const [text, setText] = useState(value);
  const [settled] = useDebouncedValue(text, 350);
  useEffect(() => setText(value), [value]);
  // Only a pause on what is typed searches: a value set from outside (a saved search) is not undone.
  useEffect(() => {
    if (settled === text && settled !== value) onChange(settled);
  }, [settled, text, value, onChange]);
  return (
    <TextInput label={label} description={description} value={text} onChange={(e) => setText(e.currentTarget.value)} />
  );
}

/**
 * The facet sidebar: every filter of LeadFilter the console offers. Each change searches again (the
 * free preview), so the total follows the facets.
 */
export function FacetSidebar({ facets, onChange }: { facets: Facets; onChange(next: Facets): void }) {
  const seniorities = useSeniorityWords();
  const set =
    <K extends keyof Facets>(key: K) =>
    (value: Facets[K]) =>
      onChange({ ...facets, [key]: value });
  const tags = (
    key: 'industry' | 'country' | 'state' | 'companyCountry' | 'companyState' | 'keywords' | 'technologies',
    label: string,
    description: string,
  ) => (
    <TagsInput
      label={label}
      description={description}
      value={facets[key]}
      onChange={set(key)}
      clearable
      acceptValueOnBlur
      splitChars={[',']}
    />
  );
  const amount = (key: 'minEmployees' | 'maxEmployees' | 'revenueMin' | 'revenueMax', label: string) => (
    <NumberInput
      label={label}
      value={facets[key]}
      min={0}
      thousandSeparator=","
      allowDecimal={false}
      onChange={(v) => set(key)(v === '' ? '' : Number(v))}
    />
  );
  const active = setCount(facets);
  return (
    <Stack gap="sm" component="section" aria-label="Filters">
      <Group justify="space-between">
        <Title order={3} size="h5">
          Filters
        </Title>
        <Button variant="subtle" size="compact-sm" disabled={active === 0} onClick={() => onChange(NO_FACETS)}>
          Clear filters{active > 0 ? ` (${active})` : ''}
        </Button>
      </Group>
      <DebouncedText
        label="Job title"
        description="Part of the title, e.g. sales"
        value={facets.title}
        onChange={set('title')}
      />
      <Choices label="Seniority" words={seniorities} value={facets.seniority} onChange={set('seniority')} />
      <Choices label="Department" words={DEPARTMENT_WORDS} value={facets.department} onChange={set('department')} />
      <Choices
        label="Email status"
        words={EMAIL_STATUS_WORDS}
        value={facets.emailStatus}
        onChange={set('emailStatus')}
      />
      <Checkbox
        label="Has an email"
        checked={facets.hasEmail}
        onChange={(e) => set('hasEmail')(e.currentTarget.checked)}
      />
      <Checkbox
        label="Has a phone"
        checked={facets.hasPhone}
        onChange={(e) => set('hasPhone')(e.currentTarget.checked)}
      />
      {tags('country', 'Person’s country', 'e.g. United States; press Enter after each')}
      {tags('state', 'Person’s state', 'A name or code, e.g. CO')}
      <DebouncedText
        label="Company"
        description="Part of the company name"
        value={facets.companyName}
        onChange={set('companyName')}
      />
      {tags('industry', 'Industry', 'e.g. Computer Software')}
      <Group grow align="flex-start">
        {amount('minEmployees', 'Employees from')}
        {amount('maxEmployees', 'Employees to')}
      </Group>
      <Group grow align="flex-start">
        {amount('revenueMin', 'Revenue from (USD)')}
        {amount('revenueMax', 'Revenue to (USD)')}
      </Group>
      {tags('technologies', 'Technologies', 'Any of, e.g. Salesforce')}
      {tags('keywords', 'Company keywords', 'Whole words, any of, e.g. saas')}
      {tags('companyCountry', 'Company’s country', 'Where its headquarters are')}
      {tags('companyState', 'Company’s state', 'A name or code')}
      <Checkbox
        label="Only people not exported before"
        checked={facets.excludeDelivered}
        onChange={(e) => set('excludeDelivered')(e.currentTarget.checked)}
      />
    </Stack>
  );
}
