import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLING } from '#infra/bundling';
import { type PinnedPackage, packageOf, SDK_PINNED_PACKAGES, satisfies } from '#infra/sdk-pins';

const ROOT = join(import.meta.dirname, '..', '..');
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const pkg = readJson(join(ROOT, 'package.json'));
const lock = readJson(join(ROOT, 'package-lock.json')) as { packages: Record<string, { version?: string }> };
const PINNED = Object.keys(SDK_PINNED_PACKAGES) as PinnedPackage[];
const pinOf = (name: PinnedPackage): string | undefined => pkg[SDK_PINNED_PACKAGES[name]]?.[name];
const installed = (name: string) =>
  readJson(join(ROOT, 'node_modules', name, 'package.json')) as {
    version: string;
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };

/** The packages our own modules import, from their import statements. */
function importedPackages(file: string): string[] {
  const source = readFileSync(join(ROOT, file), 'utf8');
  return [...source.matchAll(/\bfrom\s+'([^'.#][^']*)'/g)]
    .map((match) => match[1] as string)
    .filter((specifier) => !specifier.startsWith('node:'))
    .map(packageOf);
}

describe('SDK packages the Lambda bundles depend on by their insides', () => {
  it('pins every package a bundle alias replaces a module of', () => {
    const swapped = Object.keys(BUNDLING.alias)
      .filter((specifier) => !specifier.startsWith('node:'))
      .map(packageOf);
    expect(swapped.length).toBeGreaterThan(0);
    expect(swapped.filter((name) => !PINNED.includes(name as PinnedPackage))).toEqual([]);
  });

  it('pins every package the stand-ins and the DynamoDB client configuration import', () => {
    const files = [
      ...readdirSync(join(ROOT, 'lib', 'platform'))
        .filter((file) => file.startsWith('lambda-'))
        .map((file) => `lib/platform/${file}`),
      'lib/dynamodb/client.ts',
    ];
    const imported = [...new Set(files.flatMap(importedPackages))];
    expect(imported.length).toBeGreaterThan(0);
    expect(imported.filter((name) => !PINNED.includes(name as PinnedPackage))).toEqual([]);
  });

  it.each(PINNED)('pins %s to one exact version in package.json, never a range', (name) => {
    expect(pinOf(name), `${SDK_PINNED_PACKAGES[name]}["${name}"]`).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it.each(PINNED)('installs %s at its pin, and no other copy of it in the lockfile', (name) => {
    expect(installed(name).version).toBe(pinOf(name));
    const copies = Object.entries(lock.packages)
      .filter(([path]) => path === `node_modules/${name}` || path.endsWith(`/node_modules/${name}`))
      .map(([path, entry]) => ({ path, version: entry.version }));
    expect(copies).toEqual([{ path: `node_modules/${name}`, version: pinOf(name) }]);
  });

  it('pins the DynamoDB client, its document client and the KMS client to one SDK release', () => {
    const release = pinOf('@aws-sdk/client-dynamodb');
    expect(pinOf('@aws-sdk/lib-dynamodb')).toBe(release);
    expect(pinOf('@aws-sdk/client-kms')).toBe(release);
  });

  it.each(PINNED)('pins every pinned package %s depends on to a version it accepts', (name) => {
    const { dependencies = {}, peerDependencies = {} } = installed(name);
    const wanted = Object.entries({ ...dependencies, ...peerDependencies }).filter(([dependency]) =>
      PINNED.includes(dependency as PinnedPackage),
    );
    const refused = wanted
      .filter(([dependency, range]) => !satisfies(pinOf(dependency as PinnedPackage) ?? '', range))
      .map(([dependency, range]) => `${dependency}@${pinOf(dependency as PinnedPackage)} is not ${range}`);
    expect(refused).toEqual([]);
  });

  it('offers one command that moves them together', () => {
    expect(pkg.scripts['sdk:upgrade']).toBe('tsx infra/sdk-upgrade.ts');
  });
});

describe('the version ranges the SDK declares', () => {
  it.each([
    ['3.41.0', '^3.38.0', true],
    ['3.38.0', '^3.38.0', true],
    ['3.37.9', '^3.38.0', false],
    ['4.0.0', '^3.38.0', false],
    ['0.3.1', '^0.2.0', false],
  ])('reads %s against the caret range %s as npm does: %s', (version, range, expected) => {
    expect(satisfies(version, range)).toBe(expected);
  });

  it('reads an exact version as itself and refuses to guess any other range', () => {
    expect(satisfies('3.41.0', '3.41.0')).toBe(true);
    expect(satisfies('3.41.1', '3.41.0')).toBe(false);
    expect(() => satisfies('3.41.0', '>=3')).toThrow('Unsupported version range >=3');
  });
});
