import express from 'express';
import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { clearedSessionCookie, consumeLoginLink, createSession, deleteSession, readCookie, SESSION_COOKIE, sessionCookie } from '../sessions/index.ts';
import { acceptInvitation } from '../members/index.ts';
import { makeFirstInstanceAdmin, userForEmail } from '../users/index.ts';
import { clearedPendingCookie, OIDC_COOKIE, OidcSignIn, OidcSignInError, pendingCookie } from './oidc.ts';
import { signInPage } from './pages.ts';
import { sendPage, viewerOf } from './viewer.ts';

const TAG = 'Dashboard';

/** Where to go after signing in: a path of this origin only, never another site. */
function localPath(next: string | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.includes('\\') ? next : '/';
}

const nextQuery = z.object({ next: z.string().max(2000).optional() }).strict();

/** Signing in (a one-time link, or the OpenID Connect provider when one is set) and out. */
export function signInRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, config } = deps;
  const secure = config.publicUrl.startsWith('https://');
  const oidc = config.oidc ? new OidcSignIn(config.oidc, deps.signingSecret) : null;
  const provider = oidc ? { name: oidc.providerName } : null;

  /** A session for the person, its cookie on the answer, and on to where they were going. */
  const signIn = async (res: express.Response, userId: string, next: string) => {
    const { cookie } = await createSession(sql, userId, clock());
    res.append('set-cookie', sessionCookie(cookie, secure));
    res.redirect(303, next);
  };

  addRoute(ctx, {
    method: 'get',
    path: '/sign-in',
    tag: TAG,
    summary: 'The sign-in page',
    public: true,
    query: nextQuery,
    produces: 'text/html',
    errorShape: 'page',
    handler: async ({ query, req, res }) => {
      if (await viewerOf(deps, req)) return res.redirect(303, localPath(query.next));
      sendPage(res, signInPage(localPath(query.next), null, provider));
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/sign-in/link',
    tag: TAG,
    summary: 'Sign in with a one-time link (`proctor user login-link`): valid 15 minutes, once',
    public: true,
    query: z.object({ token: z.string().min(1).max(200), next: z.string().max(2000).optional() }).strict(),
    produces: 'text/html',
    errorShape: 'page',
    handler: async ({ query, res }) => {
      const userId = await consumeLoginLink(sql, query.token, clock());
      if (!userId) return sendPage(res, signInPage('/', 'This sign-in link has been used, has expired, or is not one: ask for a new one.', provider), 400);
      await signIn(res, userId, localPath(query.next));
    },
  });

  if (oidc) {
    const redirectUri = () => `${config.publicUrl}/sign-in/oidc/callback`;

    addRoute(ctx, {
      method: 'get',
      path: '/sign-in/oidc',
      tag: TAG,
      summary: 'Sign in with the OpenID Connect provider (PROCTOR_OIDC_ISSUER): on to the provider',
      public: true,
      query: nextQuery,
      produces: 'text/html',
      errorShape: 'page',
      handler: async ({ query, res }) => {
        try {
          const { url, pending } = await oidc.start(redirectUri(), localPath(query.next), clock());
          res.setHeader('set-cookie', pendingCookie(pending, secure));
          res.redirect(303, url);
        } catch (error) {
          if (!(error instanceof OidcSignInError)) throw error;
          sendPage(res, signInPage('/', error.message, provider), 502);
        }
      },
    });

    addRoute(ctx, {
      method: 'get',
      path: '/sign-in/oidc/callback',
      tag: TAG,
      summary: 'Where the OpenID Connect provider sends people back: a person is matched by email, or made (in no project)',
      public: true,
      // The provider's own parameters (code, state, iss, error...), read by openid-client from the URL.
      query: z.object({}).catchall(z.string().max(4000)),
      produces: 'text/html',
      errorShape: 'page',
      handler: async ({ req, res }) => {
        res.setHeader('set-cookie', clearedPendingCookie(secure));
        try {
          const person = await oidc.finish(new URL(req.originalUrl, config.publicUrl), readCookie(req.get('cookie'), OIDC_COOKIE), clock());
          const userId = await userForEmail(sql, person);
          // The first person in, on a server that has no instance admin yet, becomes one: someone must make the projects.
          await makeFirstInstanceAdmin(sql, userId);
          await signIn(res, userId, person.next);
        } catch (error) {
          if (!(error instanceof OidcSignInError)) throw error;
          sendPage(res, signInPage('/', error.message, provider), 400);
        }
      },
    });
  }

  addRoute(ctx, {
    method: 'get',
    path: '/invitations/accept',
    tag: TAG,
    summary:
      "Follow an invitation: the invited person joins its project with its role, once. Signed in, they join when their account's email is the invited one. Signed out: with OpenID Connect, they sign in through the provider first; without, the link makes the invited email's account and signs it in, and when that email has an account already, the page asks them to sign in as it and follow the link again",
    public: true,
    query: z.object({ token: z.string().min(1).max(200) }).strict(),
    produces: 'text/html',
    errorShape: 'page',
    handler: async ({ query, req, res }) => {
      const here = `/invitations/accept?token=${encodeURIComponent(query.token)}`;
      const viewer = await viewerOf(deps, req);
      if (!viewer && oidc) return res.redirect(303, `/sign-in/oidc?next=${encodeURIComponent(here)}`);
      const accepted = await acceptInvitation(sql, query.token, viewer ? { signedIn: viewer } : { signedOut: true }, clock());
      // The link never signs anyone in as an account it did not make: that account's owner signs in the usual way.
      if ('signInAs' in accepted) {
        const problem = `This invitation is for ${accepted.signInAs}, which has an account: sign in as it, then follow the invitation's link again.`;
        return sendPage(res, signInPage(here, problem, provider), 401);
      }
      const { userId, projectId, made } = accepted.joined;
      const next = `/projects/${projectId}/runs`;
      if (made) return signIn(res, userId, next);
      res.redirect(303, next);
    },
  });

  // A form post (the header's button): its body is the CSRF token, read here alone.
  ctx.open.post('/sign-out', express.urlencoded({ extended: false, limit: '2kb' }), async (req, res) => {
    const viewer = await viewerOf(deps, req);
    if (viewer && (req.body as { _csrf?: string } | undefined)?._csrf !== viewer.csrfToken) {
      return sendPage(res, signInPage('/', 'That form was not sent from this session: nothing was done.', provider), 403);
    }
    const cookie = readCookie(req.get('cookie'), SESSION_COOKIE);
    if (cookie) await deleteSession(sql, cookie);
    res.setHeader('set-cookie', clearedSessionCookie(secure));
    res.redirect(303, '/sign-in');
  });
}
