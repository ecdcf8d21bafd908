import express from 'express';
import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import {
  clearedSessionCookie,
  consumeLoginLink,
  createLoginLink,
  createSession,
  deleteSession,
  readCookie,
  SESSION_COOKIE,
  sessionCookie,
} from '../sessions/index.ts';
import { acceptInvitation } from '../members/index.ts';
import type { Mailer } from '../mail/index.ts';
import { makeFirstInstanceAdmin, userForEmail, userIdOfEmail } from '../users/index.ts';
import { RateLimit } from './rate-limit.ts';
import { signInMail } from './signin-mail.ts';
import { clearedPendingCookie, OIDC_COOKIE, OidcSignIn, OidcSignInError, pendingCookie } from './oidc.ts';
import { type SignInOptions, signInPage } from './pages.tsx';
import { sendPage, viewerOf } from './viewer.ts';

const TAG = 'Dashboard';

/** Where to go after signing in: a path of this origin only, never another site. */
function localPath(next: string | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.includes('\\') ? next : '/';
}

const nextQuery = z.object({ next: z.string().max(2000).optional() }).strict();

/** Sign-in links mailed for one email, and asked for from one address, within LIMIT_WINDOW_MS. */
const LINKS_PER_EMAIL = 3;
const LINKS_PER_ADDRESS = 20;
const LIMIT_WINDOW_MS = 15 * 60_000;

const emailSchema = z.email().max(320);

/**
 * Signing in (a one-time link, or the OpenID Connect provider when one is set) and out. With a
 * mailer, the sign-in page mails a link to the email typed in (docs/decisions/mail.md).
 */
export function signInRoutes(ctx: RouteContext, deps: AppDeps, mailer: Mailer | null): void {
  const { sql, clock, config } = deps;
  const secure = config.publicUrl.startsWith('https://');
  const oidc = config.oidc ? new OidcSignIn(config.oidc, deps.signingSecret) : null;
  const provider = oidc ? { name: oidc.providerName } : null;
  const page = (next: string, problem: string | null, options: Omit<SignInOptions, 'mail'> = {}) =>
    signInPage(next, problem, provider, { mail: mailer !== null, ...options });
  const perEmail = new RateLimit(LINKS_PER_EMAIL, LIMIT_WINDOW_MS, clock);
  const perAddress = new RateLimit(LINKS_PER_ADDRESS, LIMIT_WINDOW_MS, clock);

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
      sendPage(res, page(localPath(query.next), null));
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
      if (!userId) return sendPage(res, page('/', 'This sign-in link has been used, has expired, or is not one: ask for a new one.'), 400);
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
          sendPage(res, page('/', error.message), 502);
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
          sendPage(res, page('/', error.message), 400);
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
        return sendPage(res, page(here, problem), 401);
      }
      const { userId, projectId, made } = accepted.joined;
      const next = `/projects/${projectId}/runs`;
      if (made) return signIn(res, userId, next);
      res.redirect(303, next);
    },
  });

  // The sign-in page's form: the same answer whatever the email, sent before the account is even
  // looked up, so that neither its words nor its time tell whether the email has an account; the
  // link is made and mailed after it. Limited per email and per address, whether or not the email
  // has an account.
  ctx.open.post('/sign-in/email', express.urlencoded({ extended: false, limit: '4kb' }), (req, res) => {
    const form = (req.body ?? {}) as { email?: unknown; next?: unknown };
    const next = localPath(typeof form.next === 'string' ? form.next : undefined);
    if (!mailer) return sendPage(res, page(next, 'This server sends no mail: ask an administrator for a sign-in link.'), 404);
    const parsed = emailSchema.safeParse(typeof form.email === 'string' ? form.email.trim() : '');
    if (!parsed.success) return sendPage(res, page(next, 'That is not an email address: type the email of your account.'), 400);
    const email = parsed.data.toLowerCase();
    const wait = perAddress.take(`address:${req.ip ?? ''}`) ?? perEmail.take(`email:${email}`);
    if (wait !== null) {
      const minutes = Math.max(1, Math.ceil(wait / 60_000));
      res.setHeader('retry-after', String(Math.ceil(wait / 1000)));
      return sendPage(res, page(next, `Too many sign-in links were asked for: try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, { email }), 429);
    }
    const notice = `If ${email} is the email of an account here, a sign-in link is on its way to it. It signs you in once, within 15 minutes.`;
    sendPage(res, page(next, null, { notice, email }));
    const log = (res.locals.log as typeof deps.logger | undefined) ?? deps.logger;
    void (async () => {
      const userId = await userIdOfEmail(sql, email);
      if (userId === null) return;
      const token = await createLoginLink(sql, userId, clock());
      const url = `${config.publicUrl}/sign-in/link?token=${token}${next !== '/' ? `&next=${encodeURIComponent(next)}` : ''}`;
      mailer.sendLater(signInMail(email, url), 'sign-in link');
    })().catch((error: unknown) => log.error({ err: error }, 'making a sign-in link to mail failed'));
  });

  // A form post (the header's button): its body is the CSRF token, read here alone.
  ctx.open.post('/sign-out', express.urlencoded({ extended: false, limit: '2kb' }), async (req, res) => {
    const viewer = await viewerOf(deps, req);
    if (viewer && (req.body as { _csrf?: string } | undefined)?._csrf !== viewer.csrfToken) {
      return sendPage(res, page('/', 'That form was not sent from this session: nothing was done.'), 403);
    }
    const cookie = readCookie(req.get('cookie'), SESSION_COOKIE);
    if (cookie) await deleteSession(sql, cookie);
    res.setHeader('set-cookie', clearedSessionCookie(secure));
    res.redirect(303, '/sign-in');
  });
}
