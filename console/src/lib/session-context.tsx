import { createContext, useContext } from 'react';
import type { SessionView } from './session.ts';

export interface SessionState {
  session: SessionView;
  /** Signs out here (this session only) and goes to the sign-in page. */
  signOut(): Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

/** The signed-in session; only pages under the signed-in layout use it. */
export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside a signed-in page');
  return state;
}
