/**
 * Opens a report page the way a person does, from file://, in Chromium with the network off: an
 * offline context, and every request that is not a file aborted (and counted as an error).
 */
import { pathToFileURL } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser } from "@wp-codebox/runtime-playground";

/** A browser with one offline context; `close()` ends both. */
export interface OfflineBrowser {
  /** Opens `file`; `errors` collects console errors, page errors and failed or blocked requests. */
  open(file: string): Promise<{ page: Page; errors: string[] }>;
  close(): Promise<void>;
}

/** Launches Chromium (as the browser commands find it) with an offline context. */
export async function launchOfflineBrowser(): Promise<OfflineBrowser> {
  const browser: Browser = await launchBrowser();
  const context: BrowserContext = await browser.newContext({ offline: true, viewport: { width: 1280, height: 900 } });
  await context.route((url) => url.protocol !== "file:", (route) => route.abort());
  return {
    async open(file) {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));
      page.on("pageerror", (e) => void errors.push(e.message));
      page.on("requestfailed", (r) => void errors.push(`request failed: ${r.url()}`));
      await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
      return { page, errors };
    },
    async close() {
      await context.close();
      await browser.close();
    },
  };
}

/** True when every `<img>` the locator matches has loaded (naturalWidth > 0); false when none match. */
export async function imagesLoaded(page: Page, selector: string): Promise<boolean> {
  const widths = await page.locator(selector).evaluateAll((imgs) => imgs.map((img) => ((img as HTMLImageElement).complete ? (img as HTMLImageElement).naturalWidth : 0)));
  return widths.length > 0 && widths.every((w) => w > 0);
}
