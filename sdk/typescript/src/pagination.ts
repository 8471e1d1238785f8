/**
 * Lists that are both a page and every item: `await runs.list()` is the
 * first page; `for await (const run of runs.list())` walks all of them,
 * fetching the next page (`before = nextBefore`) only when the loop gets
 * there. It is a `Promise` of the first page in every way but the
 * prototype (`then`, `catch`, `finally`), so it can go wherever one can.
 *
 * @module
 */

import type { Page } from "./types.js";

/** Fetches one page: the one after `before`, or the first. */
export type PageFetcher<T> = (before: string | undefined) => Promise<Page<T>>;

export class PagePromise<T> implements Promise<Page<T>>, AsyncIterable<T> {
  readonly [Symbol.toStringTag] = "PagePromise";
  #fetch: PageFetcher<T>;
  #before: string | undefined;
  #first: Promise<Page<T>> | undefined;

  constructor(fetch: PageFetcher<T>, before: string | undefined) {
    this.#fetch = fetch;
    this.#before = before;
  }

  /** The first page (fetched once, on first use). */
  #page(): Promise<Page<T>> {
    this.#first ??= this.#fetch(this.#before);
    return this.#first;
  }

  then<A = Page<T>, B = never>(
    onfulfilled?: ((value: Page<T>) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#page().then(onfulfilled, onrejected);
  }

  catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page<T> | B> {
    return this.#page().catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<Page<T>> {
    return this.#page().finally(onfinally);
  }

  /** Every item of every page, newest first. */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = await this.#page();
    for (;;) {
      yield* page.data;
      if (!page.hasMore || !page.nextBefore) return;
      page = await this.#fetch(page.nextBefore);
    }
  }
}
