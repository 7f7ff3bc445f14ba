/**
 * Where the service may send a request: public internet hosts only, whatever notation a URL uses. Each URL
 * goes through Node's WHATWG parser first, as every caller's does, so what is judged is what it makes of
 * `2852039166`, `0x7f.1`, `127.1`, `017700000001`, `[::ffff:127.0.0.1]` and the rest.
 */
import { describe, expect, it } from 'vitest';
import {
  addressRefusal,
  destinationRefusal,
  hostRefusal,
  isLoopbackHost,
  PUBLIC_DESTINATIONS,
  parseIpv6,
} from '#lib/domain/destinations';
import { webhookUrlProblem } from '#lib/domain/webhook';

const LOOPBACK_ALLOWED = { allowLoopback: true };
const refusalOf = (url: string, policy = PUBLIC_DESTINATIONS) => destinationRefusal(new URL(url), policy);

describe('what Node’s URL parser leaves of a host, and what the policy makes of it', () => {
  it.each([
    ['https://2852039166/', '169.254.169.254'],
    ['https://0xa9fea9fe/', '169.254.169.254'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://017700000001/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://127.0.0.0x1/', '127.0.0.1'],
    ['https://127.0.0.1./', '127.0.0.1'],
    ['https://%31%32%37.0.0.1/', '127.0.0.1'],
    ['https://127。0。0。1/', '127.0.0.1'],
    ['https://0/', '0.0.0.0'],
    ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['https://[0:0:0:0:0:0:0:1]/', '[::1]'],
    ['https://[::127.0.0.1]/', '[::7f00:1]'],
    ['https://LOCALHOST./', 'localhost.'],
  ])('%s is parsed to the host %s', (url, host) => {
    expect(new URL(url).hostname).toBe(host);
  });

  it.each([
    // Loopback, in every notation.
    ['https://127.0.0.1/', '127.0.0.1 is a loopback address'],
    ['https://127.1/', '127.0.0.1 is a loopback address'],
    ['https://0x7f.1/', '127.0.0.1 is a loopback address'],
    ['https://017700000001/', '127.0.0.1 is a loopback address'],
    ['https://127.0.0.1./', '127.0.0.1 is a loopback address'],
    ['https://127.255.1.2/', '127.255.1.2 is a loopback address'],
    ['https://[::1]/', '[::1] is a loopback address'],
    ['https://localhost/', 'localhost is a loopback name'],
    ['https://localhost./', 'localhost. is a loopback name'],
    ['https://api.localhost/', 'api.localhost is a loopback name'],
    // The instance metadata service, link-local.
    ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    ['https://2852039166/', '169.254.169.254 is a link-local address'],
    ['https://[fe80::1]/', '[fe80::1] is a link-local address'],
    ['https://[fd00:ec2::254]/', '[fd00:ec2::254] is a unique-local address'],
    // Private, CGNAT, unspecified, broadcast, multicast, reserved.
    ['https://10.0.0.1/', '10.0.0.1 is a private address'],
    ['https://172.16.0.1/', '172.16.0.1 is a private address'],
    ['https://172.31.255.255/', '172.31.255.255 is a private address'],
    ['https://192.168.1.1/', '192.168.1.1 is a private address'],
    ['https://100.64.0.1/', '100.64.0.1 is a shared (carrier-grade NAT) address'],
    ['https://100.127.255.254/', '100.127.255.254 is a shared (carrier-grade NAT) address'],
    ['https://0.0.0.0/', '0.0.0.0 is an unspecified address'],
    ['https://0/', '0.0.0.0 is an unspecified address'],
    ['https://0.1.2.3/', '0.1.2.3 is an unspecified address'],
    ['https://[::]/', '[::] is the unspecified address'],
    ['https://255.255.255.255/', '255.255.255.255 is a broadcast address'],
    ['https://224.0.0.1/', '224.0.0.1 is a multicast address'],
    ['https://239.255.255.250/', '239.255.255.250 is a multicast address'],
    ['https://[ff02::1]/', '[ff02::1] is a multicast address'],
    ['https://240.0.0.1/', '240.0.0.1 is a reserved address'],
    ['https://198.18.0.1/', '198.18.0.1 is a reserved address'],
    ['https://[fc00::1]/', '[fc00::1] is a unique-local address'],
    ['https://[fdff::1]/', '[fdff::1] is a unique-local address'],
    // IPv4 inside IPv6: mapped, translated, compatible, NAT64 and 6to4 of a refused address.
    [
      'https://[::ffff:127.0.0.1]/',
      '[::ffff:7f00:1] is an IPv4-mapped address of 127.0.0.1, a loopback address',
    ],
    [
      'https://[::ffff:7f00:1]/',
      '[::ffff:7f00:1] is an IPv4-mapped address of 127.0.0.1, a loopback address',
    ],
    [
      'https://[::ffff:169.254.169.254]/',
      '[::ffff:a9fe:a9fe] is an IPv4-mapped address of 169.254.169.254, a link-local address',
    ],
    ['https://[::ffff:10.0.0.1]/', '[::ffff:a00:1] is an IPv4-mapped address of 10.0.0.1, a private address'],
    [
      'https://[::ffff:0:10.0.0.1]/',
      '[::ffff:0:a00:1] is an IPv4-translated address of 10.0.0.1, a private address',
    ],
    ['https://[::127.0.0.1]/', '[::7f00:1] is an IPv4-compatible address of 127.0.0.1, a loopback address'],
    ['https://[::8.8.8.8]/', '[::808:808] is an IPv4-compatible address (deprecated)'],
    [
      'https://[64:ff9b::169.254.169.254]/',
      '[64:ff9b::a9fe:a9fe] is a NAT64 address of 169.254.169.254, a link-local address',
    ],
    ['https://[64:ff9b::7f00:1]/', '[64:ff9b::7f00:1] is a NAT64 address of 127.0.0.1, a loopback address'],
    ['https://[64:ff9b:1::a00:1]/', '[64:ff9b:1::a00:1] is a local-use NAT64 address'],
    [
      'https://[2002:a9fe:a9fe::1]/',
      '[2002:a9fe:a9fe::1] is a 6to4 address of 169.254.169.254, a link-local address',
    ],
    ['https://[2001:db8::1]/', '[2001:db8::1] is a reserved address'],
    ['https://[2001:0:4136:e378::1]/', '[2001:0:4136:e378::1] is a reserved address'],
    // Names that resolve only inside a network.
    ['https://metadata/', 'metadata is a single-label name, which resolves only inside a network'],
    ['https://intranet./', 'intranet. is a single-label name, which resolves only inside a network'],
    [
      'https://metadata.google.internal/',
      'metadata.google.internal is under .internal, which resolves only inside a network',
    ],
    ['https://printer.local/', 'printer.local is under .local, which resolves only inside a network'],
    ['https://router.home.arpa/', 'router.home.arpa is under .arpa, which resolves only inside a network'],
    ['https://db.corp/', 'db.corp is under .corp, which resolves only inside a network'],
    ['https://example.com../', 'example.com.. is not a valid host name'],
  ])('refuses %s: %s', (url, reason) => {
    expect(refusalOf(url)).toBe(reason);
  });

  it.each([
    'https://hooks.example.com/in',
    'https://hooks.example.com./in',
    'https://93.184.215.14/',
    'https://8.8.8.8/',
    'https://172.32.0.1/',
    'https://100.128.0.1/',
    'https://[2606:4700:4700::1111]/',
    'https://[::ffff:8.8.8.8]/',
    'https://[64:ff9b::808:808]/',
    'https://[2002:808:808::1]/',
    'https://xn--bcher-kva.example/',
  ])('accepts %s: a public internet host', (url) => {
    expect(refusalOf(url)).toBeUndefined();
  });

  it('accepts loopback only where the policy allows it, and nothing else private even then', () => {
    for (const url of [
      'https://127.0.0.1/',
      'http://127.0.0.2:8080/',
      'https://[::1]/',
      'https://localhost/',
      'https://a.localhost./',
    ]) {
      expect(refusalOf(url, LOOPBACK_ALLOWED), url).toBeUndefined();
    }
    for (const url of [
      'https://10.0.0.1/',
      'https://169.254.169.254/',
      'https://[::ffff:127.0.0.1]/',
      'https://0.0.0.0/',
    ]) {
      expect(refusalOf(url, LOOPBACK_ALLOWED), url).toBeDefined();
    }
  });

  it('accepts a trusted origin whatever its address, and only that origin', () => {
    const policy = { allowLoopback: false, trustedOrigins: ['http://127.0.0.1:3001'] };
    expect(refusalOf('http://127.0.0.1:3001/backchannel-logout', policy)).toBeUndefined();
    expect(refusalOf('http://127.0.0.1:3002/backchannel-logout', policy)).toBe(
      '127.0.0.1 is a loopback address',
    );
    expect(refusalOf('https://127.0.0.1:3001/backchannel-logout', policy)).toBe(
      '127.0.0.1 is a loopback address',
    );
  });
});

describe('addresses as a resolver answers them', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['10.20.30.40', 'a private address'],
    ['169.254.169.254', 'a link-local address'],
    ['100.100.100.100', 'a shared (carrier-grade NAT) address'],
    ['::1', 'a loopback address'],
    ['::', 'the unspecified address'],
    ['fe80::1ff:fe23:4567:890a', 'a link-local address'],
    ['fd12:3456:789a:1::1', 'a unique-local address'],
    ['::ffff:192.168.0.1', 'an IPv4-mapped address of 192.168.0.1, a private address'],
    ['fe80::1%eth0', 'not an IP address'],
    ['not-an-address', 'not an IP address'],
  ])('refuses %s: %s', (address, reason) => {
    expect(addressRefusal(address, PUBLIC_DESTINATIONS)).toBe(reason);
  });

  it.each(['93.184.215.14', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e'])('accepts %s', (address) => {
    expect(addressRefusal(address, PUBLIC_DESTINATIONS)).toBeUndefined();
  });

  it('reads every textual form of an IPv6 address as the same number', () => {
    const one = parseIpv6('2001:db8::1');
    for (const form of ['2001:db8:0:0:0:0:0:1', '2001:0db8::0001', '2001:DB8::1'])
      expect(parseIpv6(form)).toBe(one);
    expect(parseIpv6('::ffff:127.0.0.1')).toBe(parseIpv6('::ffff:7f00:1'));
    for (const bad of ['1::2::3', '1:2:3:4:5:6:7:8:9', '12345::', '::ffff:256.0.0.1', ':::']) {
      expect(parseIpv6(bad), bad).toBeUndefined();
    }
  });
});

describe('loopback hosts', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['[::1]', true],
    ['localhost', true],
    ['localhost.', true],
    ['dev.localhost', true],
    ['[::ffff:7f00:1]', false],
    ['10.0.0.1', false],
    ['example.com', false],
  ])('%s is loopback: %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });

  it('judges a bare host as the URL leaves it', () => {
    expect(hostRefusal('127.0.0.1', PUBLIC_DESTINATIONS)).toBe('127.0.0.1 is a loopback address');
    expect(hostRefusal('hooks.example.com', PUBLIC_DESTINATIONS)).toBeUndefined();
  });
});

describe('a webhook endpoint URL', () => {
  const LOCAL = {
    allowLoopback: false,
    loopbackHint: 'WEBHOOK_ALLOW_LOOPBACK=1 allows a receiver on this machine',
  };

  it('must use https, and point to the public internet', () => {
    expect(webhookUrlProblem('https://hooks.example.com/in', PUBLIC_DESTINATIONS)).toBeUndefined();
    expect(webhookUrlProblem('http://hooks.example.com/in', PUBLIC_DESTINATIONS)).toBe(
      'url must use https, got "http://hooks.example.com/in"',
    );
    expect(webhookUrlProblem('https://10.0.0.1/in', PUBLIC_DESTINATIONS)).toBe(
      'url must point to the public internet: 10.0.0.1 is a private address',
    );
  });

  it('may be loopback http only where the policy allows loopback', () => {
    expect(webhookUrlProblem('http://127.0.0.1:4000/in', LOOPBACK_ALLOWED)).toBeUndefined();
    expect(webhookUrlProblem('http://localhost:4000/in', LOOPBACK_ALLOWED)).toBeUndefined();
    expect(webhookUrlProblem('http://[::1]:4000/in', LOOPBACK_ALLOWED)).toBeUndefined();
    expect(webhookUrlProblem('http://10.0.0.1/in', LOOPBACK_ALLOWED)).toBe(
      'url must use https (or http to a loopback receiver: 127.0.0.1, ::1, localhost), got "http://10.0.0.1/in"',
    );
    expect(webhookUrlProblem('http://127.0.0.1:4000/in', PUBLIC_DESTINATIONS)).toBe(
      'url must use https, got "http://127.0.0.1:4000/in"',
    );
  });

  it('says, on a local runtime that refuses loopback, how its operator allows it', () => {
    expect(webhookUrlProblem('https://localhost:4000/in', LOCAL)).toBe(
      'url must point to the public internet: localhost is a loopback name (WEBHOOK_ALLOW_LOOPBACK=1 allows a receiver on this machine)',
    );
    expect(webhookUrlProblem('https://10.0.0.1/in', LOCAL)).toBe(
      'url must point to the public internet: 10.0.0.1 is a private address',
    );
  });
});
