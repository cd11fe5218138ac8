// The Meta connectors (Graph-style APIs): Facebook Pages, Instagram (Instagram Login), Threads.
export { createFacebookConnector, type FacebookConnectorOptions } from './facebook.ts';
export { createInstagramConnector, type InstagramConnectorOptions } from './instagram.ts';
export { createThreadsConnector, type ThreadsConnectorOptions } from './threads.ts';
export { GRAPH_API_VERSION, type MediaUrlResolver } from './graph.ts';
