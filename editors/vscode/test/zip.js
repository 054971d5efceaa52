// Reads the entries of a .zip file (a .vsix is one): enough of the format for
// the package test, without a dependency.
'use strict';

const zlib = require('node:zlib');

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_FILE_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;

/** {name: Buffer} for every file of the archive in `data`. */
function readZip(data) {
  let end = data.length - 22;
  while (end >= 0 && data.readUInt32LE(end) !== END_OF_CENTRAL_DIRECTORY) end -= 1;
  if (end < 0) throw new Error('not a zip file: no end of central directory');
  const count = data.readUInt16LE(end + 10);
  let at = data.readUInt32LE(end + 16);
  const files = {};
  for (let i = 0; i < count; i++) {
    if (data.readUInt32LE(at) !== CENTRAL_FILE_HEADER) throw new Error(`bad central header at ${at}`);
    const method = data.readUInt16LE(at + 10);
    const compressedSize = data.readUInt32LE(at + 20);
    const nameLength = data.readUInt16LE(at + 28);
    const extraLength = data.readUInt16LE(at + 30);
    const commentLength = data.readUInt16LE(at + 32);
    const local = data.readUInt32LE(at + 42);
    const name = data.toString('utf8', at + 46, at + 46 + nameLength);
    if (data.readUInt32LE(local) !== LOCAL_FILE_HEADER) throw new Error(`bad local header for ${name}`);
    const start = local + 30 + data.readUInt16LE(local + 26) + data.readUInt16LE(local + 28);
    const raw = data.subarray(start, start + compressedSize);
    if (method === 0) files[name] = Buffer.from(raw);
    else if (method === 8) files[name] = zlib.inflateRawSync(raw);
    else throw new Error(`${name}: unknown compression method ${method}`);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return files;
}

module.exports = { readZip };
