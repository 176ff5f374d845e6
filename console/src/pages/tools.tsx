import { Badge, Button, Card, Group, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import { Loading, QueryError } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { toolSlug } from '../lib/format.ts';

const ToolsQuery = graphql(`
  query ConsoleTools {
    tools {
      name
      title
      description
      priceText
      plan
      available
    }
  }
`);

export default function Tools() {
  const [{ data, error }] = useQuery({ query: ToolsQuery });
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  return (
    <Stack>
      <PageTitle title="Tools">
        Every tool runs on the account’s wallet; a run’s estimate is held at start and it is billed on the rows it
        finds.
      </PageTitle>
      <SimpleGrid cols={{ base: 1, md: 2, lg: 3 }}>
        {data.tools.map((tool) => (
          <Card key={tool.name} withBorder component="article" aria-labelledby={`tool-${tool.name}`}>
            <Group justify="space-between" mb="xs">
              <Title order={3} size="h5" id={`tool-${tool.name}`}>
                {tool.title}
              </Title>
              {tool.plan && <Badge variant="outline">{tool.plan.toLowerCase()}+</Badge>}
            </Group>
            <Text size="sm" mb="xs">
              {tool.description}
            </Text>
            <Text size="sm" fw={600} mb="sm">
              {tool.priceText}
            </Text>
            {tool.available ? (
              <Button
                component={Link}
                to={`/tools/${toolSlug(tool.name)}`}
                variant="light"
                aria-label={`Open ${tool.title}`}
              >
                Open
              </Button>
            ) : (
              <Text size="sm" c="dimmed">
                Needs the {tool.plan?.toLowerCase()} plan or higher.
              </Text>
            )}
          </Card>
        ))}
      </SimpleGrid>
    </Stack>
  );
}
