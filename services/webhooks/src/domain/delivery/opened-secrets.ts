import type { SecretBox } from '../../store/secret-box.js';
import type { DeliveryWork } from '../../store/deliveries.js';

/** How many opened secrets are kept: a 10,000-endpoint fan-out does not empty the cache for everyone else. */
const maxKept = 20_000;

/** Endpoint secrets opened once and kept (AES-GCM per attempt costs more than the HTTP request). */
export class OpenedSecrets {
  private readonly cache = new Map<string, { sealed: Buffer; secret: string }>();

  constructor(private readonly box: SecretBox) {}

  /** The current secret, and the rotated-out one while its overlap lasts (checked per attempt, not only by the cleanup job). */
  of(work: Pick<DeliveryWork, 'endpointId' | 'secretCiphertext' | 'previousSecret'>): { secret: string; previous: string[] } {
    const secret = this.open(work.endpointId, work.secretCiphertext);
    const previous = work.previousSecret;
    if (!previous || previous.expiresAt.getTime() <= Date.now()) return { secret, previous: [] };
    return { secret, previous: [this.open(`${work.endpointId}/previous`, previous.ciphertext, work.endpointId)] };
  }

  private open(cacheKey: string, sealed: Buffer, endpointId: string = cacheKey): string {
    const cached = this.cache.get(cacheKey);
    if (cached && cached.sealed.equals(sealed)) return cached.secret;
    const secret = this.box.open(sealed, endpointId);
    this.cache.delete(cacheKey);
    this.cache.set(cacheKey, { sealed, secret });
    // Bounded, oldest first (insertion order).
    if (this.cache.size > maxKept) this.cache.delete(this.cache.keys().next().value!);
    return secret;
  }
}
