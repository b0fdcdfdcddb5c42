/**
 * `forge-ts/visualizer`: the live run visualizer. `visualizerInspector(url)` streams a process's
 * runs to a visualizer server (`forge-ts visualize`, or `createVisualizer()` in your own process).
 */
export { connectVisualizer, DEFAULT_VISUALIZER_URL, visualizerInspector, VisualizerDeliveryError, type VisualizerInspector, type VisualizerInspectorOptions } from "./inspector.js";
export { createVisualizer, type Visualizer, type VisualizerOptions } from "./server.js";
export { Feed, type FeedOptions, type FeedSlice } from "./feed.js";
export { wireSerializer, type WireSerializer } from "./wire.js";
export type * from "./protocol.js";
