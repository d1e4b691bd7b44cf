// Development entry for the PHP worker when wp-codebox runs from TypeScript sources (tsx):
// Node 20 cannot start a worker on a .ts file, so load tsx first, then the real entry.
import { register } from "tsx/esm/api";
import { workerData } from "node:worker_threads";

register();
await import(workerData.__entry);
