import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import {
  Alert,
  Button,
  Center,
  Checkbox,
  Group,
  Loader,
  Paper,
  PasswordInput,
  Radio,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useParams } from 'react-router';
import { oauth, type PendingAuthorization } from '../lib/oauth.ts';
import { auth, AuthError, type SessionView } from '../lib/session.ts';

/**
 * The consent page of an app connecting to the MCP server through OAuth (/oauth/interaction/:uid,
 * docs/api.md): sign in if needed, see which app asks and where it sends you back, choose the account,
 * the toolsets and read-only, then allow or deny. The browser then goes back to the app.
 */
export default function Consent({
  session,
  onSignedIn,
}: {
  session: SessionView | null;
  onSignedIn(session: SessionView): void;
}) {
  const { uid = '' } = useParams();
  const [pending, setPending] = useState<PendingAuthorization | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const csrfToken = session?.csrfToken;

  useEffect(() => {
    setPending(null);
    oauth.pending(uid, csrfToken).then(setPending, (err: Error) => setFailure(err.message));
  }, [uid, csrfToken]);

  if (failure)
    return (
      <Frame title="Connect an app">
        <Alert color="red" role="alert" title="This request cannot go on">
          {failure}
        </Alert>
      </Frame>
    );
  if (!pending)
    return (
      <Center h="50vh">
        <Loader role="status" aria-label="Loading" />
      </Center>
    );
  const title = `Connect ${pending.client.name}`;
  return (
    <Frame title={title}>
      <Stack>
        <Text>
          <strong>{pending.client.name}</strong> asks to use the leadgate MCP server on your behalf. Once you allow it,
          you go back to <strong data-testid="redirect-host">{pending.client.redirectHost}</strong>.
        </Text>
        <Text size="sm" c="dimmed" data-testid="client-origin">
          {pending.client.publishedBy
            ? `Its name is published by ${pending.client.publishedBy}.`
            : 'It named itself when it registered: leadgate has not checked that name.'}
        </Text>
        {pending.client.localOnly && (
          <Alert color="yellow" title="An app on this computer" role="note">
            It sends you back to {pending.client.redirectHost}, an address of this computer. Allow it only if you
            started this app yourself.
          </Alert>
        )}
        {session && pending.accounts ? (
          <ConsentForm uid={uid} pending={pending} session={session} />
        ) : (
          <SignIn onSignedIn={onSignedIn} />
        )}
      </Stack>
    </Frame>
  );
}

function Frame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main>
      <Center mih="100vh" p="md">
        <Paper withBorder p="xl" w={520} radius="md">
          <Title order={1} size="h2" mb="md">
            {title}
          </Title>
          {children}
        </Paper>
      </Center>
    </main>
  );
}

function SignIn({ onSignedIn }: { onSignedIn(session: SessionView): void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await auth.signIn({ email, password }));
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (path: string) => (error instanceof AuthError ? error.fieldMessage(path) : undefined);
  return (
    <form onSubmit={submit} aria-label="Sign in">
      <Stack>
        <Text size="sm">Sign in to your leadgate account to continue.</Text>
        {error && (
          <Alert color="red" role="alert" title="Not signed in">
            {error.message}
          </Alert>
        )}
        <TextInput
          label="Email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.currentTarget.value)}
          error={fieldError('email')}
        />
        <PasswordInput
          label="Password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
          error={fieldError('password')}
        />
        <Button type="submit" loading={busy}>
          Sign in
        </Button>
      </Stack>
    </form>
  );
}

function ConsentForm({ uid, pending, session }: { uid: string; pending: PendingAuthorization; session: SessionView }) {
  const accounts = pending.accounts ?? [];
  const allowed = accounts.filter((a) => a.mayConnect);
  const [accountId, setAccountId] = useState(
    allowed.find((a) => a.id === pending.suggested.accountId)?.id ??
      allowed.find((a) => a.id === session.account.id)?.id ??
      allowed[0]?.id ??
      '',
  );
  const [toolsets, setToolsets] = useState(pending.suggested.toolsets);
  const [readOnly, setReadOnly] = useState(pending.suggested.readOnly);
  const connection = pending.connection;
  const title = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);
  const [busy, setBusy] = useState<'allow' | 'deny' | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const fieldError = (path: string) => (error instanceof AuthError ? error.fieldMessage(path) : undefined);
  const fieldErrors = ['accountId', 'toolsets'].some((path) => fieldError(path));

  const go = (what: 'allow' | 'deny') => async (event?: FormEvent) => {
    event?.preventDefault();
    setBusy(what);
    setError(null);
    try {
      const { returnTo } =
        what === 'allow'
          ? await oauth.allow(uid, session.csrfToken, { accountId, toolsets, readOnly })
          : await oauth.deny(uid, session.csrfToken);
      window.location.assign(returnTo);
    } catch (err) {
      setError(err as Error);
      setBusy(null);
    }
  };

  return (
    <form onSubmit={go('allow')} aria-label={`Connect ${pending.client.name}`}>
      <Stack>
        {error && !fieldErrors && (
          <Alert color="red" role="alert" title="Not done">
            {error.message}
          </Alert>
        )}
        {allowed.length === 0 && (
          <Alert color="yellow" role="note" title="You cannot connect apps">
            Connecting an app is for an account’s owners and admins, as creating an API key is. Ask one of them, or deny
            this request.
          </Alert>
        )}
        {connection && connection.accountId === accountId && (
          <Alert color="blue" role="note" title="Already connected" data-testid="connection-note">
            {pending.client.name} is connected to {connection.accountName} with{' '}
            {connection.toolsets.map(title).join(', ')}
            {connection.readOnly ? ', read-only' : ''}. Allowing changes that connection to what is checked below; the
            app keeps working with it.
          </Alert>
        )}
        {accounts.length > 1 ? (
          <Radio.Group
            label="Account"
            description="The app acts on this account, with your role in it."
            value={accountId}
            onChange={setAccountId}
            error={fieldError('accountId')}
          >
            <Stack gap="xs" mt="xs">
              {accounts.map((a) => (
                <Radio
                  key={a.id}
                  value={a.id}
                  disabled={!a.mayConnect}
                  label={a.mayConnect ? `${a.name} (${a.role})` : `${a.name} (${a.role}: cannot connect apps)`}
                />
              ))}
            </Stack>
          </Radio.Group>
        ) : (
          <Text size="sm">
            Account: <strong>{accounts[0]?.name}</strong>
            {fieldError('accountId') && (
              <Text component="span" c="red" size="sm" role="alert">
                {' '}
                {fieldError('accountId')}
              </Text>
            )}
          </Text>
        )}
        <Checkbox.Group
          label="Toolsets"
          description="The app sees and calls the tools of these only."
          value={toolsets}
          onChange={setToolsets}
          error={fieldError('toolsets')}
        >
          <Stack gap="xs" mt="xs">
            {pending.toolsets.map((t) => (
              <Checkbox key={t.name} value={t.name} label={title(t.name)} description={t.description} />
            ))}
          </Stack>
        </Checkbox.Group>
        <Checkbox
          label="Read-only: only tools that change nothing (no runs started, nothing spent)"
          checked={readOnly}
          onChange={(e) => setReadOnly(e.currentTarget.checked)}
        />
        <Text size="xs" c="dimmed">
          You can revoke it at any time on the API keys page, under Connected apps.
        </Text>
        <Group justify="flex-end">
          <Button
            variant="default"
            onClick={() => void go('deny')()}
            loading={busy === 'deny'}
            disabled={busy !== null}
          >
            Deny
          </Button>
          <Button type="submit" loading={busy === 'allow'} disabled={busy !== null || allowed.length === 0}>
            Allow
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
