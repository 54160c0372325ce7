import { decryptValue, isEncrypted, parseMasterKey, SecretError } from './encrypted-values.js';

export interface DecryptIssue {
  path: (string | number)[];
  message: string;
}

/**
 * Returns a copy of a parsed YAML tree with every `ENC[...]` string decrypted. The master key is
 * read only when the first wrapped value is met, so files without secrets need no SLUICE_AUTH_KEY.
 * Problems are collected with their path; messages never include the value.
 */
export function decryptTree(tree: unknown, masterKeyText: string | undefined): { value: unknown; issues: DecryptIssue[] } {
  const issues: DecryptIssue[] = [];
  let key: Buffer | undefined;
  let keyProblem: string | undefined;

  const masterKey = (): Buffer | undefined => {
    if (key === undefined && keyProblem === undefined) {
      try {
        key = parseMasterKey(masterKeyText);
      } catch (err) {
        keyProblem = (err as Error).message;
      }
    }
    return key;
  };

  const walk = (node: unknown, path: (string | number)[]): unknown => {
    if (typeof node === 'string') {
      if (!isEncrypted(node)) return node;
      const k = masterKey();
      if (!k) {
        issues.push({ path, message: `cannot decrypt ENC[...] value: ${keyProblem ?? 'no master key'}` });
        return node;
      }
      try {
        return decryptValue(node, k);
      } catch (err) {
        issues.push({ path, message: err instanceof SecretError ? err.message : 'cannot decrypt ENC[...] value' });
        return node;
      }
    }
    if (Array.isArray(node)) return node.map((item, i) => walk(item, [...path, i]));
    if (node !== null && typeof node === 'object') {
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, [...path, k])]));
    }
    return node;
  };

  return { value: walk(tree, []), issues };
}
