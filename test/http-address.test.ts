import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { insideAddress, isMetadataHost } from '../src/net/http-address.ts';

describe('which addresses are inside', () => {
  it('names loopback, private, link-local, metadata, multicast, unspecified and broadcast', () => {
    const cases: [string, RegExp][] = [
      ['127.0.0.1', /loopback/],
      ['127.255.0.9', /loopback/],
      ['10.1.2.3', /private/],
      ['172.16.0.1', /private/],
      ['172.31.255.254', /private/],
      ['192.168.1.1', /private/],
      ['100.64.0.1', /private/],
      ['169.254.169.254', /cloud metadata/],
      ['169.254.1.1', /link-local/],
      ['0.0.0.0', /unspecified/],
      ['255.255.255.255', /broadcast/],
      ['224.0.0.251', /multicast/],
      ['::1', /loopback/],
      ['::', /unspecified/],
      ['fe80::1', /link-local/],
      ['fe80::1%eth0', /link-local/],
      ['fc00::1', /unique-local/],
      ['fd00:ec2::254', /unique-local/],
      ['ff02::1', /multicast/],
      ['::ffff:127.0.0.1', /loopback.*127\.0\.0\.1.*IPv4-mapped/],
      ['::ffff:7f00:1', /loopback.*IPv4-mapped/],
      ['::ffff:a9fe:a9fe', /cloud metadata.*IPv4-mapped/],
      ['::127.0.0.1', /loopback.*IPv4-compatible/],
      ['64:ff9b::7f00:1', /loopback.*NAT64/],
      ['64:ff9b::10.0.0.1', /private.*NAT64/],
      ['2002:c0a8:101::1', /private.*6to4/],
    ];
    for (const [address, what] of cases) assert.match(insideAddress(address) ?? 'public', what, address);
  });

  it('lets public addresses through, also in NAT64 and mapped forms', () => {
    for (const address of ['8.8.8.8', '93.184.215.14', '172.32.0.1', '100.128.0.1', '2606:4700::1111'])
      assert.equal(insideAddress(address), undefined, address);
    for (const address of ['::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])
      assert.equal(insideAddress(address), undefined, address);
  });

  it('knows cloud metadata host names, whatever their case or trailing dot', () => {
    for (const name of ['metadata.google.internal', 'Metadata.Google.Internal.', 'metadata', 'instance-data'])
      assert.equal(isMetadataHost(name), true, name);
    assert.equal(isMetadataHost('metadata.example.com'), false);
  });

  it('treats anything that is not an IP address as inside, never as public', () => {
    assert.equal(insideAddress('example.com'), 'not an IP address');
  });
});
