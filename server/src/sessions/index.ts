// What other features may use of sessions: the signed-in person behind a request's cookie, sign-in
// links, and the cookie itself.
export { clearedSessionCookie, readCookie, SESSION_COOKIE, sessionCookie } from './cookie.ts';
export { consumeLoginLink, createLoginLink, createSession, deleteSession, findSession, LOGIN_LINK_MINUTES, type Session } from './store.ts';
