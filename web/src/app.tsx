import { lazy, Suspense, useEffect, useRef, type ComponentType } from 'react';
import { NavLink, Route, Routes, useLocation } from 'react-router';
import { call } from './api.ts';
import { useAction, useResource } from './hooks.ts';
import { APP_ROUTES, type AppRoute } from '../../src/contract/app-pages.ts';
import { me, switchWorkspace } from '../../src/contract/people.ts';
import { PageBoundary } from './ui/boundary.tsx';
import { Field } from './ui/field.tsx';
import { ErrorNote, Loading, NotFound } from './ui/status.tsx';
import { NotificationsLink } from './ui/unread.tsx';

// Each page is its own chunk: the first load carries only the shell and the page opened.
const Home = lazy(() => import('./routes/home.tsx'));
const Documents = lazy(() => import('./routes/documents.tsx'));
const DocumentView = lazy(() => import('./routes/document.tsx'));
const PageView = lazy(() => import('./routes/page.tsx'));
const Automations = lazy(() => import('./routes/automations.tsx'));
const Automation = lazy(() => import('./routes/automation.tsx'));
const AutomationDraft = lazy(() => import('./routes/draft.tsx'));
const Session = lazy(() => import('./routes/session.tsx'));
const Notifications = lazy(() => import('./routes/notifications.tsx'));
const Activity = lazy(() => import('./routes/activity.tsx'));
const Settings = lazy(() => import('./routes/settings.tsx'));

/** The page each of the app's routes draws; the server serves the app on the same list. */
const PAGES: Record<AppRoute, ComponentType> = {
  '/': Home,
  '/documents': Documents,
  '/documents/:id': DocumentView,
  '/pages/:id': PageView,
  '/automations': Automations,
  '/automations/:id': Automation,
  '/automations/drafts/:id': AutomationDraft,
  '/sessions/:id': Session,
  '/notifications': Notifications,
  '/activity': Activity,
  '/settings': Settings,
};

const NAV = [
  { to: '/', label: 'Home', end: true },
  { to: '/documents', label: 'Documents', end: false },
  { to: '/automations', label: 'Automations', end: false },
  { to: '/notifications', label: 'Notifications', end: false },
  { to: '/activity', label: 'Activity', end: false },
];

/** Switching workspaces (for people in several) reloads the app in the chosen one. */
function WorkspaceSwitch({
  current,
  all,
}: {
  current: string;
  all: { workspace_id: string; name: string }[];
}) {
  const action = useAction();
  if (all.length < 2) return null;
  return (
    <div className="workspace">
      <Field label="Workspace">
        <select
          value={current}
          disabled={action.busy}
          onChange={(e) =>
            void action.perform(async () => {
              await call(switchWorkspace, { body: { workspace_id: e.target.value } });
              location.assign('/');
            })
          }
        >
          {all.map((w) => (
            <option key={w.workspace_id} value={w.workspace_id}>
              {w.name}
            </option>
          ))}
        </select>
      </Field>
      <ErrorNote error={action.error} />
    </div>
  );
}

function Header() {
  const person = useResource('me', () => call(me, {}));
  return (
    <header className="top">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <span className="brand">Tandem</span>
      <nav aria-label="Main">
        <ul>
          {NAV.map((item) => (
            <li key={item.to}>
              {item.to === '/notifications' ? (
                <NotificationsLink />
              ) : (
                <NavLink to={item.to} end={item.end}>
                  {item.label}
                </NavLink>
              )}
            </li>
          ))}
        </ul>
      </nav>
      <div className="who">
        {person.data && (
          <>
            <span title={person.data.email}>{person.data.name}</span>
            {person.data.workspaces.length > 1 ? (
              <WorkspaceSwitch current={person.data.workspace.workspace_id} all={person.data.workspaces} />
            ) : (
              <span className="muted">{person.data.workspace.name}</span>
            )}
          </>
        )}
        <NavLink to="/settings">Settings</NavLink>
        <form method="post" action="/logout">
          <button type="submit" className="link">
            Sign out
          </button>
        </form>
      </div>
    </header>
  );
}

/** Moves focus to the page's content after navigation, so keyboard and screen reader users start there. */
function useFocusOnNavigate(main: React.RefObject<HTMLElement | null>) {
  const { pathname } = useLocation();
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.focus();
  }, [pathname, main]);
}

export function App() {
  const main = useRef<HTMLElement>(null);
  const { pathname } = useLocation();
  useFocusOnNavigate(main);
  return (
    <>
      <Header />
      <main id="main" ref={main} tabIndex={-1}>
        <PageBoundary resetKey={pathname}>
          <Suspense fallback={<Loading what="the page" />}>
            <Routes>
              {APP_ROUTES.map((path) => {
                const Page = PAGES[path];
                return <Route key={path} path={path} element={<Page />} />;
              })}
              <Route path="*" element={<NotFound what="Page" />} />
            </Routes>
          </Suspense>
        </PageBoundary>
      </main>
    </>
  );
}
