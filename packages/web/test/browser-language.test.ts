/** Which language tag the charts hand to Intl: the browser's own, or the nearest tag Intl accepts. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { intlLanguage } from '../src/model/browser-language.ts'

test('a tag Intl accepts is kept as it is', () => {
  assert.equal(intlLanguage('en-US'), 'en-US')
  assert.equal(intlLanguage('de'), 'de')
  assert.equal(intlLanguage('pt-BR'), 'pt-BR')
})

test('a POSIX locale name becomes the tag before its modifier or encoding', () => {
  // What Chromium reports under LANG=C; Intl.NumberFormat throws a RangeError on it.
  assert.throws(() => new Intl.NumberFormat('en-US@posix'), RangeError)
  assert.equal(intlLanguage('en-US@posix'), 'en-US')
  assert.equal(intlLanguage('de_DE.UTF-8'), 'de-DE')
})

test('a tag with nothing Intl accepts falls back to en-US', () => {
  assert.equal(intlLanguage(''), 'en-US')
  assert.equal(intlLanguage('@posix'), 'en-US')
})
