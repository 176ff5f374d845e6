import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { Alert, Anchor, Button, Center, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { Link, Route, Routes, useParams, useSearchParams } from 'react-router';
import { auth, AuthError, type EmailVerified, type SessionView } from '../lib/session.ts';

type SignedIn = (session: SessionView) => void;

/** The pages before a session: sign up, sign in, password reset, invitation; and the email verification link's page, with or without one. */
export default function AuthPages({ onSignedIn }: { onSignedIn: SignedIn }) {
  return (
    <Routes>
      <Route path="/sign-in" element={<SignIn onSignedIn={onSignedIn} />} />
      <Route path="/sign-up" element={<SignUp onSignedIn={onSignedIn} />} />
      <Route path="/forgot-password" element={<ForgotPassword />} />
      <Route path="/reset-password" element={<ResetPassword onSignedIn={onSignedIn} />} />
      <Route path="/verify-email" element={<VerifyEmail />} />
      <Route path="/invitations/:token" element={<AcceptInvitation onSignedIn={onSignedIn} />} />
    </Routes>
  );
}

function Frame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main>
      <Center mih="100vh" p="md">
        <Paper withBorder p="xl" w={420} radius="md">
          <Title order={1} size="h2" mb="md">
            {title}
          </Title>
          {children}
        </Paper>
      </Center>
    </main>
  );
}

/** A form's submission state: busy, and the refusal of the server (shown at its fields and above them). */
function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<AuthError | Error | null>(null);
  const submit = (run: () => Promise<void>) => async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (path: string) => (error instanceof AuthError ? error.fieldMessage(path) : undefined);
  const banner = error && (
    <Alert color="red" role="alert" title="Not done">
      {error.message}
    </Alert>
  );
  return { busy, submit, fieldError, banner };
}

function SignIn({ onSignedIn }: { onSignedIn: SignedIn }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, submit, fieldError, banner } = useSubmit();
  return (
    <Frame title="Sign in">
      <form onSubmit={submit(async () => onSignedIn(await auth.signIn({ email, password })))}>
        <Stack>
          {banner}
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
          <Text size="sm">
            <Anchor component={Link} to="/sign-up">
              Create an account
            </Anchor>{' '}
            ·{' '}
            <Anchor component={Link} to="/forgot-password">
              Forgot your password?
            </Anchor>
          </Text>
        </Stack>
      </form>
      {/* The opt-out page is the gateway's own, not a route of the console: a plain link loads it. */}
      <Text component="footer" size="sm" mt="xl">
        Not a customer, but in our data? <Anchor href="/opt-out">Opt out of our data</Anchor>
      </Text>
    </Frame>
  );
}

function SignUp({ onSignedIn }: { onSignedIn: SignedIn }) {
  const [form, setForm] = useState({ name: '', accountName: '', email: '', password: '' });
  const set = (field: keyof typeof form) => (e: { currentTarget: { value: string } }) =>
    setForm({ ...form, [field]: e.currentTarget.value });
  const { busy, submit, fieldError, banner } = useSubmit();
  const send = async () => {
    const { name, accountName, email, password } = form;
    onSignedIn(
      await auth.signUp({ email, password, ...(name ? { name } : {}), ...(accountName ? { accountName } : {}) }),
    );
  };
  return (
    <Frame title="Create your account">
      <form onSubmit={submit(send)}>
        <Stack>
          {banner}
          <TextInput
            label="Your name"
            autoComplete="name"
            value={form.name}
            onChange={set('name')}
            error={fieldError('name')}
          />
          <TextInput
            label="Team name"
            description="The account your team shares: wallet, keys, runs."
            value={form.accountName}
            onChange={set('accountName')}
            error={fieldError('accountName')}
          />
          <TextInput
            label="Email"
            type="email"
            autoComplete="email"
            required
            value={form.email}
            onChange={set('email')}
            error={fieldError('email')}
          />
          <PasswordInput
            label="Password"
            description="At least 10 characters."
            autoComplete="new-password"
            required
            value={form.password}
            onChange={set('password')}
            error={fieldError('password')}
          />
          <Button type="submit" loading={busy}>
            Sign up
          </Button>
          <Text size="sm">
            Already have an account?{' '}
            <Anchor component={Link} to="/sign-in">
              Sign in
            </Anchor>
          </Text>
        </Stack>
      </form>
    </Frame>
  );
}

function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const { busy, submit, fieldError, banner } = useSubmit();
  return (
    <Frame title="Reset your password">
      {sent ? (
        <Alert color="green" role="status">
          If an account uses {email}, a link to set a new password is on its way. It works once, for one hour.
        </Alert>
      ) : (
        <form
          onSubmit={submit(async () => {
            await auth.requestReset(email);
            setSent(true);
          })}
        >
          <Stack>
            {banner}
            <TextInput
              label="Email"
              type="email"
              autoComplete="email"
              required
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
              error={fieldError('email')}
            />
            <Button type="submit" loading={busy}>
              Send the link
            </Button>
          </Stack>
        </form>
      )}
      <Text size="sm" mt="md">
        <Anchor component={Link} to="/sign-in">
          Back to sign in
        </Anchor>
      </Text>
    </Frame>
  );
}

function ResetPassword({ onSignedIn }: { onSignedIn: SignedIn }) {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [password, setPassword] = useState('');
  const { busy, submit, fieldError, banner } = useSubmit();
  return (
    <Frame title="Set a new password">
      <form onSubmit={submit(async () => onSignedIn(await auth.confirmReset({ token, password })))}>
        <Stack>
          {banner}
          <PasswordInput
            label="New password"
            description="At least 10 characters."
            autoComplete="new-password"
            required
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
            error={fieldError('password')}
          />
          <Button type="submit" loading={busy}>
            Set password and sign in
          </Button>
        </Stack>
      </form>
    </Frame>
  );
}

/** The page a verification link opens: it verifies at once and says what became of the trial credits. */
function VerifyEmail() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [result, setResult] = useState<EmailVerified | Error | undefined>(undefined);
  // One request per token, even when React runs the effect twice (StrictMode).
  const asked = useRef('');
  useEffect(() => {
    if (asked.current === token) return;
    asked.current = token;
    auth.verifyEmail(token).then(setResult, (err: Error) => setResult(err));
  }, [token]);
  return (
    <Frame title="Verify your email">
      {result === undefined ? (
        <Text role="status">Verifying…</Text>
      ) : result instanceof Error ? (
        <Alert color="red" role="alert" title="Not verified">
          {result.message}
        </Alert>
      ) : (
        <Alert
          color={result.trial === 'claimed' || result.trial === 'throwaway' ? 'yellow' : 'green'}
          role="status"
          title={result.trial === 'granted' ? 'Email verified, trial credits added' : 'Email verified'}
        >
          {result.message}
        </Alert>
      )}
      <Text size="sm" mt="md">
        {/* A full load, so the console reads the session again (the banner goes, the wallet shows the credits). */}
        <Anchor href="/">Go to the console</Anchor>
      </Text>
    </Frame>
  );
}

function AcceptInvitation({ onSignedIn }: { onSignedIn: SignedIn }) {
  const { token = '' } = useParams();
  const [invitation, setInvitation] = useState<Awaited<ReturnType<typeof auth.invitation>> | null | undefined>(
    undefined,
  );
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const { busy, submit, fieldError, banner } = useSubmit();
  useEffect(() => {
    auth.invitation(token).then(setInvitation, () => setInvitation(null));
  }, [token]);
  if (invitation === undefined) return <Frame title="Invitation">Loading…</Frame>;
  if (invitation === null) {
    return (
      <Frame title="Invitation">
        <Alert color="red" role="alert">
          This invitation is unknown, used or expired. Ask for a new one.
        </Alert>
      </Frame>
    );
  }
  return (
    <Frame title={`Join ${invitation.accountName}`}>
      <Text mb="md">
        {invitation.email} is invited as {invitation.role}.{' '}
        {invitation.userExists ? 'Enter your password to join.' : 'Choose a password to create your sign-in.'}
      </Text>
      <form
        onSubmit={submit(async () =>
          onSignedIn(await auth.acceptInvitation({ token, password, ...(name ? { name } : {}) })),
        )}
      >
        <Stack>
          {banner}
          {!invitation.userExists && (
            <TextInput
              label="Your name"
              autoComplete="name"
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
            />
          )}
          <PasswordInput
            label="Password"
            description={invitation.userExists ? undefined : 'At least 10 characters.'}
            autoComplete={invitation.userExists ? 'current-password' : 'new-password'}
            required
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
            error={fieldError('password')}
          />
          <Button type="submit" loading={busy}>
            Join {invitation.accountName}
          </Button>
        </Stack>
      </form>
    </Frame>
  );
}
