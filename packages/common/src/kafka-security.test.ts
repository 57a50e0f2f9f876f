import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkKafkaSasl, env, kafkaTopicDurability, kafkaTopicEnv, parseConfig } from './config.js';
import { kafkaSecurity } from './kafka.js';

const shape = {
  KAFKA_SSL: env.bool(false),
  KAFKA_SSL_CA_FILE: env.optionalText(),
  KAFKA_SASL_MECHANISM: env.saslMechanism(),
  KAFKA_SASL_USERNAME: env.optionalText(),
  KAFKA_SASL_PASSWORD: env.optionalText(),
};

describe('Kafka connection security from the environment', () => {
  it('is plaintext without SASL by default', () => {
    expect(kafkaSecurity(parseConfig(shape, {}))).toEqual({});
  });

  it('uses TLS with the system trust store, or with the given CA bundle', () => {
    expect(kafkaSecurity(parseConfig(shape, { KAFKA_SSL: 'true' }))).toEqual({ ssl: true });
    const caFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'kafka-ca-')), 'ca.pem');
    writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    expect(kafkaSecurity(parseConfig(shape, { KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: caFile }))).toEqual({
      ssl: { ca: ['-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'] },
    });
  });

  it('passes the SASL mechanism and credentials', () => {
    const config = parseConfig(shape, {
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'tasks',
      KAFKA_SASL_PASSWORD: 'secret',
    });
    checkKafkaSasl(config);
    expect(kafkaSecurity(config)).toEqual({ sasl: { mechanism: 'scram-sha-512', username: 'tasks', password: 'secret' } });
  });

  it('fails fast naming the variable: unknown mechanism, or a mechanism without credentials', () => {
    expect(() => parseConfig(shape, { KAFKA_SASL_MECHANISM: 'gssapi' })).toThrow(/KAFKA_SASL_MECHANISM/);
    expect(() => checkKafkaSasl(parseConfig(shape, { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u' }))).toThrow(
      'Invalid configuration: KAFKA_SASL_PASSWORD: is required with KAFKA_SASL_MECHANISM',
    );
    expect(() => parseConfig(shape, { KAFKA_SSL: 'yes please' })).toThrow(/KAFKA_SSL/);
  });
});

describe('Kafka topic settings from the environment', () => {
  it('default to 3 replicas with 2 in sync, and refuse more in sync than replicas, naming the variable', () => {
    expect(kafkaTopicDurability(parseConfig(kafkaTopicEnv, {}))).toEqual({ replicationFactor: 3, minInsyncReplicas: 2 });
    const local = parseConfig(kafkaTopicEnv, { KAFKA_TOPIC_REPLICATION_FACTOR: '1', KAFKA_TOPIC_MIN_INSYNC_REPLICAS: '1' });
    expect(kafkaTopicDurability(local)).toEqual({ replicationFactor: 1, minInsyncReplicas: 1 });
    expect(() => kafkaTopicDurability(parseConfig(kafkaTopicEnv, { KAFKA_TOPIC_REPLICATION_FACTOR: '1' }))).toThrow(
      'KAFKA_TOPIC_MIN_INSYNC_REPLICAS: must not exceed KAFKA_TOPIC_REPLICATION_FACTOR (1)',
    );
    expect(() => parseConfig(kafkaTopicEnv, { KAFKA_TOPIC_REPLICATION_FACTOR: '0' })).toThrow(/KAFKA_TOPIC_REPLICATION_FACTOR/);
  });
});
