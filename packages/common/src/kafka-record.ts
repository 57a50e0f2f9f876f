import { createRequire, Module } from 'node:module';

/**
 * A record encoder for kafkajs's produce requests (v3 and later: the record format v2 of
 * KIP-98), writing the bytes kafkajs's own `recordBatch/record/v0` writes, in one buffer sized
 * beforehand. kafkajs's encoder makes a zero-filled 512-byte buffer for the record and another for
 * each of its headers, a `Buffer.from([...])` for each varint and `Long` arithmetic for the
 * timestamp delta: ~10 % of the tasks service's CPU in a PATCH, about as much again in the garbage
 * collector (bench/HISTORY.md, sessions 12 and 15). kafkajs 2.2.4 is its last release, so its
 * internals no longer move; `installKafkaRecordEncoder` swaps this one in before the produce request
 * module that calls it is first loaded, and `kafka-record.test.ts` checks the bytes against kafkajs's.
 */

type Bytes = Buffer | string | null | undefined;

/** What kafkajs passes the record encoder: a message of `producer.send`, with its deltas. */
export interface RecordInput {
  offsetDelta?: number;
  timestampDelta?: number;
  key?: Bytes;
  value?: Bytes;
  headers?: Record<string, Bytes | Bytes[]>;
}

/** What kafkajs's batch encoder reads of an encoded record (`writeEncoder`: `buf` to check, `buffer` to copy). */
export interface EncodedRecord {
  buf: Buffer;
  buffer: Buffer;
}

type RecordEncoder = (input: RecordInput) => EncodedRecord;

/** Zig-zag varints up to this magnitude: where kafkajs's 32- and 64-bit encodings give the same bytes. */
const varintSafe = 2 ** 30;

function zigZag(value: number): number {
  return ((value << 1) ^ (value >> 31)) >>> 0;
}

function sizeOfVarint(value: number): number {
  let encoded = zigZag(value);
  let size = 1;
  while (encoded >= 0x80) {
    encoded >>>= 7;
    size += 1;
  }
  return size;
}

function writeVarint(target: Buffer, at: number, value: number): number {
  let encoded = zigZag(value);
  while (encoded >= 0x80) {
    target[at++] = (encoded & 0x7f) | 0x80;
    encoded >>>= 7;
  }
  target[at++] = encoded;
  return at;
}

/** A field's length as the record states it: its UTF-8 length for a string, -1 for null. */
function lengthOf(value: Bytes): number {
  if (value === null || value === undefined) return -1;
  return typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : value.length;
}

/** What a field of `length` (`lengthOf`) takes in the record: its length as a varint, then its bytes. */
function sizeOfBytes(length: number): number {
  return sizeOfVarint(length) + Math.max(length, 0);
}

function writeBytes(target: Buffer, at: number, value: Bytes, length: number): number {
  at = writeVarint(target, at, length);
  if (length <= 0 || value === null || value === undefined) return at;
  if (typeof value === 'string') target.write(value, at, length, 'utf8');
  else value.copy(target, at);
  return at + length;
}

/**
 * The record's bytes, or undefined for a record left to kafkajs's encoder: a delta that is not an
 * integer or is beyond ±2^30, a header value that is neither a string nor a Buffer.
 */
export function encodeRecord(input: RecordInput): EncodedRecord | undefined {
  const { offsetDelta = 0, timestampDelta = 0, key, value, headers = {} } = input;
  if (!Number.isInteger(offsetDelta) || !Number.isInteger(timestampDelta)) return undefined;
  if (Math.abs(offsetDelta) >= varintSafe || Math.abs(timestampDelta) >= varintSafe) return undefined;
  const headerKeys: string[] = [];
  const headerValues: Bytes[] = [];
  for (const headerKey of Object.keys(headers)) {
    const headerValue = headers[headerKey];
    for (const one of Array.isArray(headerValue) ? headerValue : [headerValue]) {
      if (one !== null && one !== undefined && typeof one !== 'string' && !Buffer.isBuffer(one)) return undefined;
      headerKeys.push(headerKey);
      headerValues.push(one);
    }
  }
  const keyLength = lengthOf(key);
  const valueLength = lengthOf(value);
  const headerKeyLengths = headerKeys.map((headerKey) => Buffer.byteLength(headerKey, 'utf8'));
  const headerValueLengths = headerValues.map(lengthOf);
  let bodySize = 1 + sizeOfVarint(timestampDelta) + sizeOfVarint(offsetDelta) + sizeOfBytes(keyLength) + sizeOfBytes(valueLength);
  bodySize += sizeOfVarint(headerKeys.length);
  for (let i = 0; i < headerKeys.length; i += 1) bodySize += sizeOfBytes(headerKeyLengths[i]!) + sizeOfBytes(headerValueLengths[i]!);
  const record = Buffer.allocUnsafe(sizeOfVarint(bodySize) + bodySize);
  let at = writeVarint(record, 0, bodySize);
  record[at++] = 0; // attributes: none
  at = writeVarint(record, at, timestampDelta);
  at = writeVarint(record, at, offsetDelta);
  at = writeBytes(record, at, key, keyLength);
  at = writeBytes(record, at, value, valueLength);
  at = writeVarint(record, at, headerKeys.length);
  for (let i = 0; i < headerKeys.length; i += 1) {
    at = writeBytes(record, at, headerKeys[i]!, headerKeyLengths[i]!);
    at = writeBytes(record, at, headerValues[i], headerValueLengths[i]!);
  }
  return { buf: record, buffer: record };
}

const require = createRequire(import.meta.url);
/** kafkajs's record encoder, and the one module that requires it (produce requests v3 and later reuse v3's). */
const recordPath = require.resolve('kafkajs/src/protocol/recordBatch/record/v0');
const producePath = require.resolve('kafkajs/src/protocol/requests/produce/v3/request');

/** What this file uses of a CommonJS module object (`load` is not in Node's typings). */
interface CommonJsModule {
  exports: unknown;
  loaded: boolean;
  filename: string;
  load(filename: string): void;
}

let installed = false;

/**
 * Makes kafkajs's produce requests encode their records with `encodeRecord` (kafkajs's own for what
 * it leaves): puts a module of ours in the CommonJS cache under the name of kafkajs's record encoder,
 * before the produce request module that requires it is first loaded (at a producer's first send).
 * Not by changing the cached module's exports: with tracing on, OpenTelemetry's require hook keeps
 * its own copy of every module's exports after their first require. kafkajs's encoder is compiled
 * from its file outside the cache. Idempotent; false when the produce request module was loaded
 * before (it then keeps kafkajs's encoder). kafka.ts's `createKafka` calls it.
 */
export function installKafkaRecordEncoder(): boolean {
  if (installed) return true;
  if (require.cache[producePath] !== undefined) return false;
  let original = require.cache[recordPath]?.exports as RecordEncoder | undefined;
  if (original === undefined) {
    const compiled = new Module(recordPath) as unknown as CommonJsModule;
    compiled.load(recordPath);
    original = compiled.exports as RecordEncoder;
  }
  const kafkajsEncoder = original;
  const ours = new Module(recordPath) as unknown as CommonJsModule;
  ours.filename = recordPath;
  ours.loaded = true;
  ours.exports = (input: RecordInput): EncodedRecord => encodeRecord(input) ?? kafkajsEncoder(input);
  require.cache[recordPath] = ours as unknown as NodeJS.Module;
  installed = true;
  return true;
}
