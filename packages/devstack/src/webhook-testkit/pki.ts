import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export interface TestPki {
  /** PEM of the test CA (what the webhooks service is told to trust). */
  caPem: string;
  caFile: string;
  /** Certificate (leaf + CA chain) and key of the receivers, valid for `*.<domain>` and `<domain>`. */
  serverCertPem: string;
  serverKeyPem: string;
}

const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

async function pemOfKey(key: webcrypto.CryptoKey): Promise<string> {
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;
}

/** A throw-away CA and one server certificate for the test receivers (ECDSA P-256, valid 2 days). */
export async function createTestPki(domain: string): Promise<TestPki> {
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 2 * 24 * 3600_000);
  const caKeys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=task-workspace webhook test CA',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const serverKeys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const server = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: `CN=*.${domain}`,
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: serverKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: `*.${domain}` },
        { type: 'dns', value: domain },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(ca, false),
    ],
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'tws-webhook-pki-'));
  const caPem = ca.toString('pem');
  const caFile = path.join(dir, 'ca.pem');
  writeFileSync(caFile, `${caPem}\n`);
  return {
    caPem,
    caFile,
    serverCertPem: `${server.toString('pem')}\n${caPem}\n`,
    serverKeyPem: await pemOfKey(serverKeys.privateKey),
  };
}
