// The Web Worker the simulations run in: the page's own module, loaded a second time
// (web/src/main.rs starts the worker's side when it finds itself in a worker). Trunk writes
// the module unhashed (Trunk.toml's `filehash = false`), so this name is stable.
import init from "./bubblelab-web.js";
await init();
