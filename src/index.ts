/** The public API of wp-codebox: the backend-agnostic contracts and the WordPress Playground backend. */
export * from "@wp-codebox/runtime-core";
export * from "@wp-codebox/runtime-playground";
