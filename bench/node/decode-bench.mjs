// Node's side of BenchmarkDecodeBody (bench/decode_test.go): the time to turn
// a render request body, already in memory, into its fields, with the parsers
// the reference server (server.mjs) and Fastify use: the raw-JS body decoded
// as UTF-8; JSON through secure-json-parse (Fastify's JSON body parser); a
// form through fast-querystring (the parser of @fastify/formbody, which
// server.mjs registers); multipart through @fastify/busboy
// (@fastify/multipart's parser). The bodies carry the same fields as the Go
// benchmark's, built the way the gem builds them.
//
//   node bench/node/decode-bench.mjs bench/results/<run>/medium.js bench/results/<run>/large.js
//
// Prints the median milliseconds per decode of each encoding.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const sjson = require('secure-json-parse');
const querystring = require('fast-querystring');
const Busboy = require('@fastify/busboy');

const runs = Number(process.env.RUNS || 30);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const meta = { protocolVersion: '2.0.0', gemVersion: '17.0.0', railsEnv: 'production', password: 'bench-password-0123456789' };

function bodies(code) {
  const boundary = '0123456789abcdef0123456789abcdef0123456789abcdef';
  const parts = ['password', 'gemVersion', 'protocolVersion', 'railsEnv']
    .map((k) => [k, meta[k]]).concat([['renderingRequest', code]])
    .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  return {
    raw: { body: Buffer.from(code) },
    json: { body: Buffer.from(JSON.stringify({ renderingRequest: code, dependencyBundleTimestamps: [], ...meta })) },
    form: { body: Buffer.from(new URLSearchParams({ ...meta, renderingRequest: code }).toString()) },
    multipart: { body: Buffer.from(parts.join('') + `--${boundary}--\r\n`), type: `multipart/form-data; boundary=${boundary}` },
  };
}

function multipart(body, type) {
  return new Promise((resolve, reject) => {
    const fields = {};
    const bb = new Busboy({ headers: { 'content-type': type }, limits: { fieldSize: 10 * 1024 * 1024 } });
    bb.on('field', (name, value) => { fields[name] = value; });
    bb.on('finish', () => resolve(fields));
    bb.on('error', reject);
    bb.end(body);
  });
}

const decoders = {
  raw: async (b) => ({ renderingRequest: b.body.toString('utf8') }),
  json: async (b) => sjson.parse(b.body.toString('utf8')),
  form: async (b) => querystring.parse(b.body.toString('utf8')),
  multipart: (b) => multipart(b.body, b.type),
};

for (const file of process.argv.slice(2)) {
  const code = readFileSync(file, 'utf8');
  const encoded = bodies(code);
  for (const [enc, decode] of Object.entries(decoders)) {
    const times = [];
    for (let i = 0; i < runs; i += 1) {
      const t = performance.now();
      const fields = await decode(encoded[enc]);
      times.push(performance.now() - t);
      if (fields.renderingRequest !== code) throw new Error(`${enc}: renderingRequest differs`);
    }
    console.log(`${file} ${enc}: ${encoded[enc].body.length} bytes, median ${median(times).toFixed(3)} ms`);
  }
}
