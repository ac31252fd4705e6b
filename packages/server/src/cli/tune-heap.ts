/**
 * Imported first by the `sluice` command, for its side effect: the heap limits of app/heap.ts are set
 * before any other module is evaluated, so the young generation does not grow while the server's
 * modules load (it stays grown: most of an idle Sluice's resident memory above its code was there).
 */
import { keepHeapSmall } from '../app/heap.ts'

keepHeapSmall()
