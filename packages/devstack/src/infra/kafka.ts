import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { assetsDir, cacheDir } from '../paths.js';
import { DevstackError, progress } from '../progress.js';
import { freePort, runCommand, startProcess, waitUntil, type ManagedProcess } from '../processes.js';

/** 3.9 still speaks every protocol version kafkajs 2.2.4 uses (4.x removed some old ones). */
export const kafkaVersion = '3.9.1';

export interface RunningKafka {
  brokers: string[];
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

function serverProperties(dataDir: string, brokerPort: number, controllerPort: number): string {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${brokerPort},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${brokerPort}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${path.join(dataDir, 'logs')}`,
    'num.partitions=3',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=6',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    // Topics are created explicitly by each service's migration step, as in production.
    'auto.create.topics.enable=false',
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

export async function startKafka(logDir: string, options: { choosePort?: () => Promise<number> } = {}): Promise<RunningKafka> {
  const choosePort = options.choosePort ?? freePort;
  const libs = await ensureKafka();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tws-kafka-'));
  const configFile = path.join(dataDir, 'server.properties');
  const log4jFile = path.join(dataDir, 'log4j.properties');
  writeFileSync(log4jFile, log4jProperties);
  const classpath = path.join(libs, '*');
  const jvm = ['-cp', classpath, `-Dlog4j.configuration=file:${log4jFile}`];
  let brokers: string[] = [];
  let server: ManagedProcess | undefined;
  const startServer = async (): Promise<void> => {
    server = startProcess('kafka', 'java', [...brokerJavaOptions(), ...jvm, 'kafka.Kafka', configFile], { logDir });
    await waitUntil('Kafka', () => brokerAnswers(brokers), { timeoutMs: 60_000, process: server, intervalMs: 500 });
  };
  // The ports are free when chosen, but they come from the ephemeral range: any outgoing connection
  // on the machine may take one before the JVM binds it. Then: new ports, fresh storage, again.
  const logFile = path.join(logDir, 'kafka.log');
  for (let attempt = 1; ; attempt++) {
    const [brokerPort, controllerPort] = [await choosePort(), await choosePort()];
    rmSync(path.join(dataDir, 'logs'), { recursive: true, force: true });
    writeFileSync(configFile, serverProperties(dataDir, brokerPort, controllerPort));
    progress(`starting Kafka ${kafkaVersion} (KRaft) on 127.0.0.1:${brokerPort}`);
    await runCommand('java', [...jvm, 'kafka.tools.StorageTool', 'format', `--cluster-id=${randomBytes(16).toString('base64url')}`, '-c', configFile], {
      what: 'formatting Kafka storage',
    });
    brokers = [`127.0.0.1:${brokerPort}`];
    const logOffset = existsSync(logFile) ? statSync(logFile).size : 0;
    try {
      await startServer();
      break;
    } catch (error) {
      const portTaken = existsSync(logFile) && readFileSync(logFile).subarray(logOffset).includes('Address already in use');
      if (!portTaken || attempt >= 3) throw error;
      progress('Kafka: a chosen port was taken before the broker bound it; starting again on new ports');
    }
  }
  const stopServer = async (): Promise<void> => {
    await server?.stop(30_000);
  };
  return {
    brokers,
    startServer,
    stopServer,
    async stop() {
      await stopServer();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A small dev broker: C1 only, because a fresh broker's C2 compiler otherwise takes a quarter of a
 * core for minutes (measured during `npm run bench` on 2 cores), more than the broker's own work at
 * a few thousand messages/s. TWS_KAFKA_JAVA_OPTS is appended (e.g. `-XX:TieredStopAtLevel=4`).
 */
function brokerJavaOptions(): string[] {
  const extra = (process.env.TWS_KAFKA_JAVA_OPTS ?? '').split(/\s+/).filter(Boolean);
  return ['-Xms256m', '-Xmx768m', '-XX:TieredStopAtLevel=1', ...extra];
}

async function brokerAnswers(brokers: string[]): Promise<boolean> {
  const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    if (cluster.brokers.length === 0) throw new DevstackError('no brokers yet');
    return true;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
