import assert from 'node:assert/strict'
import type { LookupAddress, LookupOptions } from 'node:dns'
import type { LookupFunction } from 'node:net'
import { describe, test } from 'node:test'
import {
  blockedRange,
  createGuardedLookup,
  guardedResolve,
  type Resolver,
  refusalForHost,
  SsrfRefusedError,
} from '../../src/deliver/ssrf.ts'

describe('blockedRange: refused address ranges', () => {
  const blocked: Array<[string, RegExp]> = [
    ['127.0.0.1', /^loopback$/],
    ['127.255.255.254', /^loopback$/],
    ['::1', /^loopback$/],
    ['10.0.0.1', /^private$/],
    ['10.255.255.255', /^private$/],
    ['172.16.0.1', /^private$/],
    ['172.31.255.255', /^private$/],
    ['192.168.1.1', /^private$/],
    ['fc00::1', /^private/],
    ['fd12:3456:789a::1', /^private/],
    ['169.254.1.1', /^link-local$/],
    ['fe80::1', /^link-local$/],
    ['fe80::1%eth0', /^link-local$/],
    ['febf:ffff::1', /^link-local$/],
    ['100.64.0.1', /CGNAT/],
    ['100.127.255.255', /CGNAT/],
    ['224.0.0.1', /^multicast$/],
    ['239.255.255.250', /^multicast$/],
    ['ff02::1', /^multicast$/],
    ['0.0.0.0', /^unspecified/],
    ['0.1.2.3', /^unspecified/],
    ['::', /^unspecified$/],
    ['255.255.255.255', /^broadcast$/],
    ['240.0.0.1', /^reserved$/],
    ['169.254.169.254', /^cloud metadata$/],
    ['100.100.100.200', /^cloud metadata$/],
    ['168.63.129.16', /^cloud metadata$/],
    ['fd00:ec2::254', /^cloud metadata$/],
    ['198.18.0.1', /^benchmarking$/],
    ['198.19.255.255', /^benchmarking$/],
    ['192.0.2.1', /^documentation$/],
    ['198.51.100.1', /^documentation$/],
    ['203.0.113.1', /^documentation$/],
    ['2001:db8::1', /^documentation$/],
    ['192.0.0.8', /IETF/],
    ['100::1', /discard/],
    ['fec0::1', /site-local/],
    ['64:ff9b:1::a00:1', /local-use NAT64/],
    // IPv6 forms that carry an IPv4 address are judged by it.
    ['::ffff:127.0.0.1', /^IPv4-mapped loopback 127\.0\.0\.1$/],
    ['::ffff:7f00:1', /^IPv4-mapped loopback 127\.0\.0\.1$/],
    ['0:0:0:0:0:ffff:a9fe:a9fe', /^IPv4-mapped cloud metadata 169\.254\.169\.254$/],
    ['::ffff:10.1.2.3', /^IPv4-mapped private 10\.1\.2\.3$/],
    ['::127.0.0.1', /^IPv4-compatible loopback/],
    ['::10.0.0.1', /^IPv4-compatible private/],
    ['64:ff9b::7f00:1', /^NAT64 loopback 127\.0\.0\.1$/],
    ['64:ff9b::192.168.0.1', /^NAT64 private 192\.168\.0\.1$/],
    ['2002:7f00:1::', /^6to4 loopback 127\.0\.0\.1$/],
    ['2002:a9fe:a9fe::1', /^6to4 cloud metadata/],
    // Teredo: server 65.54.227.120, client 192.0.2.45 (RFC 4380's example) / 127.0.0.1 (inverted bits).
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /^Teredo documentation 192\.0\.2\.45$/],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', /^Teredo loopback 127\.0\.0\.1$/],
    ['not-an-ip', /not an IP address/],
    ['', /not an IP address/],
  ]
  for (const [address, range] of blocked) {
    test(`${address || '(empty)'} is refused`, () => assert.match(blockedRange(address) ?? 'ALLOWED', range))
  }

  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.15.255.255', // just below 172.16/12
    '172.32.0.1', // just above
    '100.63.255.255', // just below CGNAT
    '100.128.0.1', // just above
    '192.169.0.1',
    '169.255.0.1',
    '198.20.0.1',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8', // IPv4-mapped public
    '64:ff9b::808:808', // NAT64 of 8.8.8.8
    '2002:808:808::1', // 6to4 of 8.8.8.8
    '[2606:4700:4700::1111]',
  ]
  for (const address of allowed) {
    test(`${address} is allowed`, () => assert.equal(blockedRange(address), undefined))
  }
})

describe('URL spellings are normalized before the check', () => {
  const spellings: Array<[string, string]> = [
    ['http://2130706433/', '127.0.0.1'], // decimal
    ['http://0x7f000001/', '127.0.0.1'], // hex
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'], // octal
    ['http://017700000001/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'], // shortened
    ['http://0/', '0.0.0.0'],
    ['http://0251.0376.0251.0376/', '169.254.169.254'],
    ['http://2852039166/', '169.254.169.254'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['http://[0:0:0:0:0:0:0:1]/', '[::1]'],
    ['http://[::]/', '[::]'],
    ['http://[fd00:ec2::254]/', '[fd00:ec2::254]'],
  ]
  for (const [url, hostname] of spellings) {
    test(`${url} -> ${hostname}, refused`, () => {
      const parsed = new URL(url)
      assert.equal(parsed.hostname, hostname)
      const refusal = refusalForHost(parsed.hostname)
      assert.ok(refusal instanceof SsrfRefusedError, 'refused')
    })
  }

  test('host names are left to the lookup', () => {
    assert.equal(refusalForHost('example.com'), undefined)
    assert.equal(refusalForHost('localhost'), undefined)
    assert.equal(refusalForHost('8.8.8.8'), undefined)
  })
})

describe('SsrfRefusedError', () => {
  test('names the host, the address, the range and the setting that allows it', () => {
    const error = new SsrfRefusedError('internal.example', '10.0.0.5', 'private')
    assert.equal(error.code, 'ERR_SLUICE_SSRF')
    assert.equal(
      error.message,
      'Refused to connect to internal.example (10.0.0.5): private addresses are not allowed as webhook ' +
        'destinations. Set SLUICE_ALLOW_PRIVATE_DESTINATIONS=true to allow them (local development only).',
    )
    assert.match(
      new SsrfRefusedError('127.0.0.1', '127.0.0.1', 'loopback').message,
      /^Refused to connect to 127\.0\.0\.1: loopback/,
    )
  })
})

/** Calls a LookupFunction the way net.connect does, as a promise. */
function callLookup(
  lookup: LookupFunction,
  hostname: string,
  options: LookupOptions,
): Promise<{ address: string | LookupAddress[]; family: number | undefined }> {
  return new Promise((resolve, reject) => {
    lookup(hostname, options, (error, address, family) =>
      error ? reject(error) : resolve({ address, family }),
    )
  })
}

function fixedResolver(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = []
  const resolve = async (hostname: string) => {
    calls.push(hostname)
    return (table[hostname] ?? []).map((address) => ({
      address,
      family: address.includes(':') ? (6 as const) : (4 as const),
    }))
  }
  return Object.assign(resolve, { calls })
}

describe('createGuardedLookup', () => {
  test('localhost (system resolver) is refused as loopback', async () => {
    const lookup = createGuardedLookup()
    await assert.rejects(callLookup(lookup, 'localhost', { all: true }), (error: unknown) => {
      assert.ok(error instanceof SsrfRefusedError)
      assert.match(
        error.message,
        /^Refused to connect to localhost \((127\.0\.0\.1|::1)\): loopback .*SLUICE_ALLOW_PRIVATE_DESTINATIONS=true/,
      )
      return true
    })
  })

  test('a host name that resolves to 127.0.0.1 is refused', async () => {
    const resolve = fixedResolver({ 'hooks.attacker.test': ['127.0.0.1'] })
    const lookup = createGuardedLookup({ resolve })
    await assert.rejects(
      callLookup(lookup, 'hooks.attacker.test', {}),
      /hooks\.attacker\.test \(127\.0\.0\.1\): loopback/,
    )
  })

  test('a name with one public and one private address is refused', async () => {
    const resolve = fixedResolver({ 'mixed.test': ['93.184.216.34', '10.0.0.7'] })
    await assert.rejects(
      callLookup(createGuardedLookup({ resolve }), 'mixed.test', { all: true }),
      /10\.0\.0\.7\): private/,
    )
  })

  test('public addresses pass, in both callback forms net uses', async () => {
    const resolve = fixedResolver({ 'public.test': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] })
    const lookup = createGuardedLookup({ resolve })
    assert.deepEqual(await callLookup(lookup, 'public.test', { all: true }), {
      address: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
      ],
      family: undefined,
    })
    assert.deepEqual(await callLookup(lookup, 'public.test', {}), { address: '93.184.216.34', family: 4 })
    assert.deepEqual(await callLookup(lookup, 'public.test', { family: 6 }), {
      address: '2606:2800:220:1:248:1893:25c8:1946',
      family: 6,
    })
  })

  test('an unknown name fails as ENOTFOUND', async () => {
    const lookup = createGuardedLookup({ resolve: fixedResolver({}) })
    await assert.rejects(callLookup(lookup, 'nowhere.test', {}), { code: 'ENOTFOUND' })
  })

  test('DNS rebinding: resolves once and returns exactly the address it checked', async () => {
    // A rebinding server answers public first, then loopback.
    const answers = ['93.184.216.34', '127.0.0.1']
    let calls = 0
    const rebinding: Resolver = async () => [{ address: answers[Math.min(calls++, 1)] ?? '', family: 4 }]
    const lookup = createGuardedLookup({ resolve: rebinding })
    const first = await callLookup(lookup, 'rebind.test', {})
    assert.equal(calls, 1, 'one resolution per connection')
    assert.deepEqual(first, { address: '93.184.216.34', family: 4 }, 'the checked address is the one dialled')
    // The next connection resolves again, and is checked again.
    await assert.rejects(callLookup(lookup, 'rebind.test', {}), SsrfRefusedError)
    assert.equal(calls, 2)
  })

  test('allowPrivate turns the guard off but still resolves once', async () => {
    const resolve = fixedResolver({ 'dev.test': ['127.0.0.1'] })
    const lookup = createGuardedLookup({ allowPrivate: true, resolve })
    assert.deepEqual(await callLookup(lookup, 'dev.test', {}), { address: '127.0.0.1', family: 4 })
    assert.deepEqual(resolve.calls, ['dev.test'])
    const system = createGuardedLookup({ allowPrivate: true })
    const localhost = await callLookup(system, 'localhost', {})
    assert.match(String(localhost.address), /^(127\.0\.0\.1|::1)$/)
  })

  test('IP literals are checked without any DNS query', async () => {
    const resolve = fixedResolver({})
    assert.deepEqual(await guardedResolve('8.8.8.8', false, resolve), [{ address: '8.8.8.8', family: 4 }])
    assert.deepEqual(await guardedResolve('[2606:4700:4700::1111]', false, resolve), [
      { address: '2606:4700:4700::1111', family: 6 },
    ])
    await assert.rejects(guardedResolve('[::ffff:7f00:1]', false, resolve), /IPv4-mapped loopback/)
    await assert.rejects(
      callLookup(createGuardedLookup({ resolve }), '169.254.169.254', {}),
      /cloud metadata/,
    )
    assert.deepEqual(resolve.calls, [])
    assert.deepEqual(await guardedResolve('127.0.0.1', true, resolve), [{ address: '127.0.0.1', family: 4 }])
  })
})
