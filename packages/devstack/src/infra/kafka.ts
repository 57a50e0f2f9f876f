import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { installKafkaRequestQueueFix } from '@tws/common/kafka-request-queue';
import { Kafka, logLevel } from 'kafkajs';
import { assetsDir, cacheDir } from '../paths.js';
import { DevstackError, progress } from '../progress.js';
import { freePort, runCommand, startProcess, waitUntil, type ManagedProcess } from '../processes.js';

/** 3.9 still speaks every protocol version kafkajs 2.2.4 uses (4.x removed some old ones). */
export const kafkaVersion = '3.9.1';

/** One KRaft node (broker and controller) of a cluster the launcher started. */
export interface KafkaNode {
  /** node.id, 1…N. */
  id: number;
  /** `127.0.0.1:port` of its broker listener. */
  broker: string;
  /** Starts it (again, on the same ports and storage) and waits until the cluster lists its broker. */
  start(): Promise<void>;
  /** SIGTERM (a controlled shutdown), SIGKILL after 30 s. */
  stop(): Promise<void>;
  /** SIGKILL at once, as a crashed machine (fault tests). */
  kill(): Promise<void>;
}

export interface RunningKafka {
  brokers: string[];
  nodes: KafkaNode[];
  /** Replication settings that fit this cluster (KAFKA_TOPIC_REPLICATION_FACTOR, KAFKA_TOPIC_MIN_INSYNC_REPLICAS). */
  topicReplication: { replicationFactor: number; minInsyncReplicas: number };
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  stop(): Promise<void>;
}

/** Resolves the broker's jars from Maven Central into the cache, once. */
export async function ensureKafka(): Promise<string> {
  const libs = path.join(cacheDir, `kafka-${kafkaVersion}`, 'libs');
  const marker = path.join(libs, '.complete');
  if (existsSync(marker)) return libs;
  progress(`downloading Apache Kafka ${kafkaVersion} jars from Maven Central (mvn dependency:copy-dependencies)…`);
  rmSync(libs, { recursive: true, force: true });
  mkdirSync(libs, { recursive: true });
  await runCommand(
    'mvn',
    [
      '-B', '-q',
      '-f', path.join(assetsDir, 'kafka-pom.xml'),
      `-Dkafka.version=${kafkaVersion}`,
      'dependency:copy-dependencies',
      `-DoutputDirectory=${libs}`,
      '-DincludeScope=runtime',
    ],
    { what: 'downloading Kafka with Maven (needs java and mvn on PATH)' },
  );
  writeFileSync(marker, new Date().toISOString());
  progress(`Kafka ${kafkaVersion} cached in ${libs}`);
  return libs;
}

interface NodePorts {
  broker: number;
  controller: number;
}

function serverProperties(dataDir: string, id: number, ports: NodePorts[]): string {
  const own = ports[id - 1]!;
  const internalReplicas = Math.min(ports.length, 3);
  return [
    'process.roles=broker,controller',
    `node.id=${id}`,
    `controller.quorum.voters=${ports.map((node, index) => `${index + 1}@127.0.0.1:${node.controller}`).join(',')}`,
    `listeners=PLAINTEXT://127.0.0.1:${own.broker},CONTROLLER://127.0.0.1:${own.controller}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${own.broker}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${path.join(dataDir, 'logs')}`,
    'num.partitions=3',
    // Stock defaults otherwise (default.replication.factor=1, min.insync.replicas=1): the topics'
    // durability is what the migration steps ask for, as against a production cluster.
    `offsets.topic.replication.factor=${internalReplicas}`,
    'offsets.topic.num.partitions=6',
    `transaction.state.log.replication.factor=${internalReplicas}`,
    `transaction.state.log.min.isr=${Math.max(1, internalReplicas - 1)}`,
    'group.initial.rebalance.delay.ms=0',
    // Topics are created explicitly by each service's migration step, as in production.
    'auto.create.topics.enable=false',
    ...(ports.length > 1 ? ['num.network.threads=2', 'num.io.threads=2', 'num.replica.fetchers=1', 'background.threads=2'] : []),
    '',
  ].join('\n');
}

const log4jProperties = [
  'log4j.rootLogger=WARN, stdout',
  'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
  'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
  'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
  'log4j.logger.kafka.server.KafkaRaftServer=INFO',
  '',
].join('\n');

/**
 * Starts a KRaft cluster of `nodes` combined broker+controller nodes (default 1) on loopback, each
 * with its own storage, formatted with one cluster id, and waits until every broker is registered.
 */
export async function startKafka(logDir: string, options: { choosePort?: () => Promise<number>; nodes?: number } = {}): Promise<RunningKafka> {
  const choosePort = options.choosePort ?? freePort;
  const count = options.nodes ?? 1;
  const libs = await ensureKafka();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tws-kafka-'));
  const log4jFile = path.join(dataDir, 'log4j.properties');
  writeFileSync(log4jFile, log4jProperties);
  const jvm = ['-cp', path.join(libs, '*'), `-Dlog4j.configuration=file:${log4jFile}`];
  const nodeName = (id: number): string => (count === 1 ? 'kafka' : `kafka-${id}`);
  const nodeDir = (id: number): string => (count === 1 ? dataDir : path.join(dataDir, `node-${id}`));
  const configFile = (id: number): string => path.join(nodeDir(id), 'server.properties');
  const servers = new Map<number, ManagedProcess>();
  let brokers: string[] = [];

  const launch = (id: number): ManagedProcess => {
    const server = startProcess(nodeName(id), 'java', [...brokerJavaOptions(count), ...jvm, 'kafka.Kafka', configFile(id)], { logDir });
    servers.set(id, server);
    return server;
  };
  const startNodes = async (which: number[]): Promise<void> => {
    const started = which.map(launch);
    const expected = which.map((id) => brokers[id - 1]!);
    await waitUntil('Kafka', () => brokerAnswers(brokers, expected), { timeoutMs: 90_000, intervalMs: 500, process: started });
  };
  const ids = Array.from({ length: count }, (_, index) => index + 1);
  const stopNodes = async (which: number[]): Promise<void> => {
    await Promise.all(which.map((id) => servers.get(id)?.stop(30_000)));
  };

  // The ports are free when chosen, but they come from the ephemeral range: any outgoing connection
  // on the machine may take one before the JVM binds it. Then: new ports, fresh storage, again.
  for (let attempt = 1; ; attempt++) {
    const ports: NodePorts[] = [];
    for (let n = 0; n < count; n++) ports.push({ broker: await choosePort(), controller: await choosePort() });
    const clusterId = randomBytes(16).toString('base64url');
    for (const id of ids) {
      rmSync(path.join(nodeDir(id), 'logs'), { recursive: true, force: true });
      mkdirSync(nodeDir(id), { recursive: true });
      writeFileSync(configFile(id), serverProperties(nodeDir(id), id, ports));
      await runCommand('java', [...jvm, 'kafka.tools.StorageTool', 'format', `--cluster-id=${clusterId}`, '-c', configFile(id)], {
        what: 'formatting Kafka storage',
      });
    }
    brokers = ports.map((node) => `127.0.0.1:${node.broker}`);
    progress(`starting Kafka ${kafkaVersion} (KRaft, ${count} node${count > 1 ? 's' : ''}) on ${brokers.join(', ')}`);
    const logOffsets = ids.map((id) => logSize(path.join(logDir, `${nodeName(id)}.log`)));
    try {
      await startNodes(ids);
      break;
    } catch (error) {
      await stopNodes(ids);
      const portTaken = ids.some((id, index) => {
        const logFile = path.join(logDir, `${nodeName(id)}.log`);
        return existsSync(logFile) && readFileSync(logFile).subarray(logOffsets[index]).includes('Address already in use');
      });
      if (!portTaken || attempt >= 3) throw error;
      progress('Kafka: a chosen port was taken before the broker bound it; starting again on new ports');
    }
  }
  const replicationFactor = Math.min(count, 3);
  return {
    brokers,
    nodes: ids.map((id) => ({
      id,
      broker: brokers[id - 1]!,
      start: () => startNodes([id]),
      stop: () => stopNodes([id]),
      kill: async () => {
        await servers.get(id)?.kill();
      },
    })),
    topicReplication: { replicationFactor, minInsyncReplicas: Math.max(1, replicationFactor - 1) },
    startServer: () => startNodes(ids),
    stopServer: () => stopNodes(ids),
    async stop() {
      await stopNodes(ids);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function logSize(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

/**
 * A small dev broker: C1 only, because a fresh broker's C2 compiler otherwise takes a quarter of a
 * core for minutes (measured during `npm run bench` on 2 cores), more than the broker's own work at
 * a few thousand messages/s. Nodes of a multi-node cluster (fault tests) get a smaller heap.
 * TWS_KAFKA_JAVA_OPTS is appended (e.g. `-XX:TieredStopAtLevel=4`).
 */
function brokerJavaOptions(nodes: number): string[] {
  const extra = (process.env.TWS_KAFKA_JAVA_OPTS ?? '').split(/\s+/).filter(Boolean);
  const heap = nodes === 1 ? ['-Xms256m', '-Xmx768m'] : ['-Xms128m', '-Xmx384m'];
  return [...heap, '-XX:TieredStopAtLevel=1', ...extra];
}

/**
 * True once the cluster, and every broker of `expected` asked alone, answer and list every broker
 * of `expected`: brokers learn of each other one after another, and a client (a migration step)
 * may ask any of them.
 */
async function brokerAnswers(brokers: string[], expected: string[]): Promise<boolean> {
  // Without it each admin's connection checks its empty request queue every millisecond while open.
  installKafkaRequestQueueFix();
  const lists = async (asked: string[]): Promise<void> => {
    const admin = new Kafka({ brokers: asked, logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      const listed = new Set(cluster.brokers.map((broker) => `${broker.host}:${broker.port}`));
      if (!expected.every((broker) => listed.has(broker))) throw new DevstackError(`${asked.join(',')}: not every broker is registered yet`);
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  };
  await Promise.all([lists(brokers), ...expected.map((broker) => lists([broker]))]);
  return true;
}
