import { createVerify, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { appJwt, installationToken } from '../../server/src/notifications/github-app.ts';

const { publicKey, privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
});

const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

describe("the server's GitHub App", () => {
  it('when the App signs its JWT, then it is RS256, issued by the App a minute back and expires within ten minutes', () => {
    const now = Date.UTC(2026, 10, 25, 12, 0, 0);
    const [header, payload, signature] = appJwt({ appId: 4242, privateKey }, now).split('.') as [string, string, string];

    expect(decode(header)).toEqual({ alg: 'RS256', typ: 'JWT' });
    const claims = decode(payload);
    expect(claims).toEqual({ iss: '4242', iat: now / 1000 - 60, exp: now / 1000 - 60 + 540 });
    expect(claims.exp - now / 1000).toBeLessThanOrEqual(600);
    expect(createVerify('RSA-SHA256').update(`${header}.${payload}`).verify(publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
  });

  it("when an installation's token has more than five minutes left, then it is used again, and else a new one is asked for", async () => {
    const app = { appId: 9001, privateKey };
    const start = Date.UTC(2026, 10, 25, 12, 0, 0);
    let minted = 0;
    const mint = async () => ({ token: `ghs_${++minted}`, expires_at: new Date(start + 3_600_000).toISOString() });

    expect(await installationToken(app, 1, mint, start)).toBe('ghs_1');
    expect(await installationToken(app, 1, mint, start + 54 * 60_000)).toBe('ghs_1');
    expect(await installationToken(app, 2, mint, start)).toBe('ghs_2');
    expect(await installationToken(app, 1, mint, start + 56 * 60_000)).toBe('ghs_3');
    expect(minted).toBe(3);
  });

  it('when GitHub refuses a new token, then the refusal reaches the delivery and nothing is kept', async () => {
    const app = { appId: 9002, privateKey };
    const refused = Object.assign(new Error('Bad credentials'), { status: 401 });
    await expect(
      installationToken(app, 1, async () => {
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(await installationToken(app, 1, async () => ({ token: 'ghs_after', expires_at: new Date(Date.now() + 3_600_000).toISOString() }))).toBe('ghs_after');
  });
});
