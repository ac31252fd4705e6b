/**
 * Real Chromium for tests, driven by playwright-core. Shared by every browser test (the Tracking API's
 * browser SDK tests now, the web app's later), so that they all run the same browser the same way.
 *
 * Where the browser comes from: the `@sparticuz/chromium` devDependency carries a headless Chromium
 * build inside the npm package, so `npm install` alone provides it on a fresh machine (Playwright's own
 * browser download is not used: it needs network access that the test machines do not have). The
 * binary is unpacked once per checkout into `node_modules/.cache/sluice-chromium/<version>/`.
 * `SLUICE_CHROMIUM=/path/to/chromium` runs another Chromium instead (e.g. Debian's `/usr/bin/chromium`
 * on a machine where the packaged build does not run).
 *
 * A browser test never skips: when no browser can be started, `launchChromium` throws and says why.
 */
import { randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream, existsSync } from 'node:fs'
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { arch, platform } from 'node:os'
import { dirname, extname, join, resolve, sep } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { createBrotliDecompress } from 'node:zlib'
import { type Browser, chromium } from 'playwright-core'

/**
 * Flags every test browser starts with. Without the background-networking ones Chromium keeps calling
 * Google's services, and on machines without internet access those calls fail many at a time.
 * Playwright itself adds `--headless`, `--no-sandbox` (as root, Chromium's sandbox cannot start) and a
 * fresh, temporary `--user-data-dir` for every launch.
 */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

const REPO_ROOT = resolve(import.meta.dirname, '../../../..')
const CACHE_DIR = join(REPO_ROOT, 'node_modules/.cache/sluice-chromium')

/** Starts headless Chromium. Close it with `browser.close()`. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = await chromiumExecutable()
  try {
    return await chromium.launch({ executablePath, args: CHROMIUM_FLAGS, timeout: 60_000 })
  } catch (error) {
    throw new Error(
      `Chromium (${executablePath}) did not start: ${(error as Error).message}\n` +
        'Browser tests need it. Run `npm install` to get the packaged build, or set SLUICE_CHROMIUM to the path of a Chromium binary.',
    )
  }
}

/** The Chromium binary to run: `SLUICE_CHROMIUM`, or the one packaged in `@sparticuz/chromium`, unpacked. */
export async function chromiumExecutable(): Promise<string> {
  const override = process.env.SLUICE_CHROMIUM
  if (override) {
    if (!existsSync(override)) throw new Error(`SLUICE_CHROMIUM is set to ${override}, which does not exist.`)
    return override
  }
  if (platform() !== 'linux' || arch() !== 'x64') {
    throw new Error(
      `The packaged Chromium (@sparticuz/chromium) runs on Linux x64 only; this is ${platform()} ${arch()}. ` +
        'Install Chromium and set SLUICE_CHROMIUM to its path to run the browser tests.',
    )
  }
  const packageDir = dirname(dirname(fileURLToPath(import.meta.resolve('@sparticuz/chromium'))))
  const { version } = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as {
    version: string
  }
  const target = join(CACHE_DIR, version, 'chromium')
  if (existsSync(target)) return target
  // Unpack to a private name, then rename: test files run in parallel processes, and a process must
  // never start a half-written binary another one is still unpacking.
  await mkdir(dirname(target), { recursive: true })
  const partial = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.partial`
  try {
    await pipeline(
      createReadStream(join(packageDir, 'bin/chromium.br')),
      createBrotliDecompress(),
      createWriteStream(partial, { mode: 0o755 }),
    )
    await rename(partial, target)
  } catch (error) {
    await rm(partial, { force: true })
    throw new Error(
      `Could not unpack the packaged Chromium into ${dirname(target)}: ${(error as Error).message}`,
    )
  }
  return target
}

/** A page or file a test server answers with. */
export type StaticRoute = { html: string } | { file: string } | { js: string }

export interface StaticServer {
  /** e.g. `http://127.0.0.1:41234` */
  url: string
  /** Every request the server saw, in order (method and path with query). */
  requests: { method: string; url: string }[]
  close(): Promise<void>
}

/**
 * A plain HTTP server on loopback for test pages and the files they load (an SDK's build, read from
 * node_modules where npm put it). Paths not in `routes` answer 404.
 */
export async function serveStatic(routes: Record<string, StaticRoute>): Promise<StaticServer> {
  const requests: StaticServer['requests'] = []
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    requests.push({ method: request.method ?? '', url: request.url ?? '' })
    const route = routes[new URL(request.url ?? '/', 'http://localhost').pathname]
    if (!route) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      return
    }
    if ('html' in route) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(route.html)
      return
    }
    if ('js' in route) {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(route.js)
      return
    }
    readFile(route.file).then(
      (body) =>
        response
          .writeHead(200, { 'content-type': contentType(route.file), 'cache-control': 'no-store' })
          .end(body),
      (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(error.message),
    )
  })
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections()
        server.close(() => done())
      }),
  }
}

/** The path of a file inside an installed npm package (which must list it, or its folder, in its files). */
export async function packageFile(packageName: string, relativePath: string): Promise<string> {
  let dir = dirname(fileURLToPath(import.meta.resolve(packageName)))
  // Walk up from the package's entry point to the folder holding its package.json.
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`No package.json above the entry of ${packageName}`)
    dir = parent
  }
  const file = resolve(dir, relativePath)
  if (!file.startsWith(dir + sep)) throw new Error(`${relativePath} is outside ${packageName}`)
  await stat(file)
  return file
}

function contentType(file: string): string {
  const types: Record<string, string> = {
    '.js': 'text/javascript; charset=utf-8',
    '.mjs': 'text/javascript; charset=utf-8',
    '.html': 'text/html; charset=utf-8',
    '.json': 'application/json',
  }
  return types[extname(file)] ?? 'application/octet-stream'
}
