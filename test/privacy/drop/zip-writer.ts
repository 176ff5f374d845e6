/**
 * A small ZIP writer for tests: archives like DROP's downloads, in memory (`zipSync`, optionally with
 * ZIP64 records) or streamed to disk with data descriptors (`writeZipFile`, for the million-row list).
 */
import { open } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';

interface Written {
  name: Buffer;
  crc: number;
  compressedSize: number;
  size: number;
  offset: number;
  method: number;
  flags: number;
}

const UTF8 = 0x0800;
const DESCRIPTOR = 0x0008;
const MAX32 = 0xffffffff;

function localHeader(e: Omit<Written, 'offset'>, zip64: boolean): Buffer {
  const extra = zip64 ? Buffer.alloc(20) : Buffer.alloc(0);
  if (zip64) {
    extra.writeUInt16LE(0x0001, 0);
    extra.writeUInt16LE(16, 2);
    extra.writeBigUInt64LE(BigInt(e.size), 4);
    extra.writeBigUInt64LE(BigInt(e.compressedSize), 12);
  }
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(zip64 ? 45 : 20, 4);
  h.writeUInt16LE(e.flags, 6);
  h.writeUInt16LE(e.method, 8);
  h.writeUInt16LE(0x2100, 12); // 1996-09-01, any valid DOS date
  h.writeUInt32LE(e.crc >>> 0, 14);
  h.writeUInt32LE(zip64 ? MAX32 : e.compressedSize, 18);
  h.writeUInt32LE(zip64 ? MAX32 : e.size, 22);
  h.writeUInt16LE(e.name.length, 26);
  h.writeUInt16LE(extra.length, 28);
  return Buffer.concat([h, e.name, extra]);
}

function centralDirectory(entries: Written[], start: number, zip64: boolean): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const extra = zip64 ? Buffer.alloc(28) : Buffer.alloc(0);
    if (zip64) {
      extra.writeUInt16LE(0x0001, 0);
      extra.writeUInt16LE(24, 2);
      extra.writeBigUInt64LE(BigInt(e.size), 4);
      extra.writeBigUInt64LE(BigInt(e.compressedSize), 12);
      extra.writeBigUInt64LE(BigInt(e.offset), 20);
    }
    const h = Buffer.alloc(46);
    h.writeUInt32LE(0x02014b50, 0);
    h.writeUInt16LE(45, 4);
    h.writeUInt16LE(zip64 ? 45 : 20, 6);
    h.writeUInt16LE(e.flags, 8);
    h.writeUInt16LE(e.method, 10);
    h.writeUInt16LE(0x2100, 14);
    h.writeUInt32LE(e.crc >>> 0, 16);
    h.writeUInt32LE(zip64 ? MAX32 : e.compressedSize, 20);
    h.writeUInt32LE(zip64 ? MAX32 : e.size, 24);
    h.writeUInt16LE(e.name.length, 28);
    h.writeUInt16LE(extra.length, 30);
    h.writeUInt32LE(zip64 ? MAX32 : e.offset, 42);
    parts.push(h, e.name, extra);
  }
  const directory = Buffer.concat(parts);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(zip64 ? 0xffff : entries.length, 8);
  end.writeUInt16LE(zip64 ? 0xffff : entries.length, 10);
  end.writeUInt32LE(zip64 ? MAX32 : directory.length, 12);
  end.writeUInt32LE(zip64 ? MAX32 : start, 16);
  if (!zip64) return Buffer.concat([directory, end]);

  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(44n, 4);
  record.writeUInt16LE(45, 12);
  record.writeUInt16LE(45, 14);
  record.writeBigUInt64LE(BigInt(entries.length), 24);
  record.writeBigUInt64LE(BigInt(entries.length), 32);
  record.writeBigUInt64LE(BigInt(directory.length), 40);
  record.writeBigUInt64LE(BigInt(start), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(start + directory.length), 8);
  locator.writeUInt32LE(1, 16);
  return Buffer.concat([directory, record, locator, end]);
}

/** An archive of `entries`, deflated unless `store`; `zip64` writes every size and offset in ZIP64 records. */
export function zipSync(
  entries: readonly { name: string; data: string | Buffer }[],
  options: { store?: boolean; zip64?: boolean } = {},
): Buffer {
  const zip64 = options.zip64 ?? false;
  const parts: Buffer[] = [];
  const written: Written[] = [];
  let offset = 0;
  for (const { name, data } of entries) {
    const raw = Buffer.from(data);
    const body = options.store ? raw : deflateRawSync(raw);
    const e = {
      name: Buffer.from(name),
      crc: crc32(raw),
      compressedSize: body.length,
      size: raw.length,
      method: options.store ? 0 : 8,
      flags: UTF8,
    };
    const header = localHeader(e, zip64);
    written.push({ ...e, offset });
    parts.push(header, body);
    offset += header.length + body.length;
  }
  parts.push(centralDirectory(written, offset, zip64));
  return Buffer.concat(parts);
}

/** Writes an archive to `path`, each entry's content streamed from `chunks` and deflated on the way. */
export async function writeZipFile(
  path: string,
  entries: readonly { name: string; chunks: Iterable<string> | AsyncIterable<string> }[],
): Promise<void> {
  const file = await open(path, 'w');
  const written: Written[] = [];
  let offset = 0;
  const write = async (buffer: Buffer) => {
    await file.write(buffer);
    offset += buffer.length;
  };
  try {
    for (const { name, chunks } of entries) {
      const e = { name: Buffer.from(name), crc: 0, compressedSize: 0, size: 0, method: 8, flags: UTF8 | DESCRIPTOR };
      const start = offset;
      await write(localHeader(e, false));
      const tap = new Transform({
        transform(chunk: Buffer, _enc, done) {
          e.crc = crc32(chunk, e.crc);
          e.size += chunk.length;
          done(null, chunk);
        },
      });
      await pipeline(Readable.from(chunks), tap, createDeflateRaw(), async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) {
          e.compressedSize += chunk.length;
          await write(chunk);
        }
      });
      const descriptor = Buffer.alloc(16);
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(e.crc >>> 0, 4);
      descriptor.writeUInt32LE(e.compressedSize, 8);
      descriptor.writeUInt32LE(e.size, 12);
      await write(descriptor);
      written.push({ ...e, offset: start });
    }
    await write(centralDirectory(written, offset, false));
  } finally {
    await file.close();
  }
}
