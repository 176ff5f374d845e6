import { lazy, Suspense, useCallback, useEffect, useMemo, useState } from 'react';
import { Center, Loader } from '@mantine/core';
import { Navigate, Route, Routes, useLocation, useNavigate } from 'react-router';
import { Provider } from 'urql';
import { auth, type SessionView } from './lib/session.ts';
import { createGraphQLClient } from './lib/client.ts';
import { SessionContext } from './lib/session-context.tsx';
import { Shell } from './Shell.tsx';

// Each page is its own chunk: the first load carries the shell and the page asked for.
const AuthPages = lazy(() => import('./pages/auth.tsx'));
const Overview = lazy(() => import('./pages/overview.tsx'));
const Tools = lazy(() => import('./pages/tools.tsx'));
const ToolForm = lazy(() => import('./pages/tool-form.tsx'));
const RunPage = lazy(() => import('./pages/run.tsx'));
const Runs = lazy(() => import('./pages/runs.tsx'));
const Keys = lazy(() => import('./pages/keys.tsx'));
const Members = lazy(() => import('./pages/members.tsx'));
const Leads = lazy(() => import('./pages/leads.tsx'));
const Sessions = lazy(() => import('./pages/sessions.tsx'));
const Billing = lazy(() => import('./pages/billing.tsx'));
const Webhooks = lazy(() => import('./pages/webhooks.tsx'));
const Datasets = lazy(() => import('./pages/datasets.tsx'));
const Schedules = lazy(() => import('./pages/schedules.tsx'));
const Pipelines = lazy(() => import('./pages/pipelines.tsx'));
const PipelinePage = lazy(() => import('./pages/pipeline.tsx'));
const Enrichment = lazy(() => import('./pages/enrichment.tsx'));
const Connections = lazy(() => import('./pages/connections.tsx'));
const Destinations = lazy(() => import('./pages/destinations.tsx'));
const DestinationPage = lazy(() => import('./pages/destination.tsx'));
const Consent = lazy(() => import('./pages/consent.tsx'));
const DoNotContact = lazy(() => import('./pages/do-not-contact.tsx'));
const AuditLog = lazy(() => import('./pages/audit.tsx'));

const AUTH_PATHS = ['/sign-in', '/sign-up', '/forgot-password', '/reset-password', '/verify-email', '/invitations/'];
/** An app connecting through OAuth: its consent page signs in by itself and stays on its route. */
const CONSENT_PATH = '/oauth/interaction/';

const loading = (
  <Center h="50vh">
    <Loader role="status" aria-label="Loading" />
  </Center>
);

export function App() {
  const [session, setSession] = useState<SessionView | null | undefined>(undefined);
  const navigate = useNavigate();
  const location = useLocation();

  useEffect(() => {
    auth.current().then(setSession, () => setSession(null));
  }, []);

  const signedIn = useCallback(
    (view: SessionView) => {
      setSession(view);
      navigate('/', { replace: true });
    },
    [navigate],
  );

  const signOut = useCallback(async () => {
    if (session) await auth.signOut(session.csrfToken).catch(() => undefined);
    setSession(null);
    navigate('/sign-in', { replace: true });
  }, [session, navigate]);
  const ended = useCallback(() => {
    setSession(null);
    navigate('/sign-in', { replace: true });
  }, [navigate]);

  const graphql = useMemo(
    () => (session ? createGraphQLClient(session.csrfToken, ended) : undefined),
    [session, ended],
  );
  useEffect(() => () => graphql?.dispose(), [graphql]);

  if (session === undefined) return loading;
  if (location.pathname.startsWith(CONSENT_PATH))
    return (
      <Suspense fallback={loading}>
        <Routes>
          <Route path="/oauth/interaction/:uid" element={<Consent session={session} onSignedIn={setSession} />} />
        </Routes>
      </Suspense>
    );
  const onAuthPage = AUTH_PATHS.some((p) => location.pathname.startsWith(p));
  if (!session || !graphql || onAuthPage) {
    return (
      <Suspense fallback={loading}>
        {onAuthPage ? <AuthPages onSignedIn={signedIn} /> : <Navigate to="/sign-in" replace />}
      </Suspense>
    );
  }

  return (
    <SessionContext.Provider value={{ session, signOut }}>
      <Provider value={graphql.client}>
        <Shell>
          <Suspense fallback={loading}>
            <Routes>
              <Route path="/" element={<Overview />} />
              <Route path="/tools" element={<Tools />} />
              <Route path="/tools/:tool" element={<ToolForm />} />
              <Route path="/runs" element={<Runs />} />
              <Route path="/runs/:runId" element={<RunPage />} />
              <Route path="/keys" element={<Keys />} />
              <Route path="/members" element={<Members />} />
              <Route path="/leads" element={<Leads />} />
              <Route path="/sessions" element={<Sessions onSignedOut={ended} />} />
              <Route path="/billing" element={<Billing />} />
              <Route path="/webhooks" element={<Webhooks />} />
              <Route path="/datasets" element={<Datasets />} />
              <Route path="/pipelines" element={<Pipelines />} />
              <Route path="/pipelines/:id" element={<PipelinePage />} />
              <Route path="/schedules" element={<Schedules />} />
              <Route path="/enrichment" element={<Enrichment />} />
              <Route path="/do-not-contact" element={<DoNotContact />} />
              <Route path="/connections" element={<Connections />} />
              <Route path="/destinations" element={<Destinations />} />
              <Route path="/destinations/:id" element={<DestinationPage />} />
              <Route path="/audit-log" element={<AuditLog />} />
              <Route path="*" element={<Navigate to="/" replace />} />
            </Routes>
          </Suspense>
        </Shell>
      </Provider>
    </SessionContext.Provider>
  );
}
