import type { Server } from '@grpc/grpc-js';
import type { Http2SecureServer, Http2Server, ServerHttp2Session } from 'node:http2';

/** How much a client may send the gRPC server before it waits for a window update. */
export interface ReceiveWindows {
  /** Per call (HTTP/2 stream): the `SETTINGS_INITIAL_WINDOW_SIZE` the server advertises. */
  stream: number;
  /** Over all the calls of one connection. */
  connection: number;
}

/** The connection's window holds at least this much, so calls in flight together do not share 64 KiB. */
const MIN_CONNECTION_WINDOW = 4 * 1024 * 1024;

/**
 * The windows for a server that takes requests of up to `maxRequestBytes`: a whole request fits
 * its call's window, and several fit the connection's.
 */
export function receiveWindowsFor(maxRequestBytes: number): ReceiveWindows {
  return { stream: maxRequestBytes, connection: Math.max(maxRequestBytes, MIN_CONNECTION_WINDOW) };
}

/**
 * Opens the receive windows of the HTTP/2 servers `server` listens with. HTTP/2 starts every call
 * and every connection with a 64 KiB window, and grpc-js's server has no option to raise it (its
 * client has): a client then sends at most 64 KiB, over all its calls on a connection, until the
 * server's event loop has read it and sent a window update. A `PublishBatch` of a few hundred
 * events is larger than that, so it waited for whatever the server was busy with, and the calls
 * in flight together took turns.
 *
 * grpc-js keeps its HTTP/2 servers to itself: they are read from its `http2Servers` field once
 * the server is bound. Answers false, changing nothing, when that field is not there (another
 * grpc-js version), so the caller can say so; the gRPC tests check the windows a client sees.
 */
export function openReceiveWindows(server: Server, windows: ReceiveWindows): boolean {
  const http2Servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(http2Servers instanceof Map)) return false;
  for (const http2Server of http2Servers.keys() as Iterable<Http2Server | Http2SecureServer>) {
    // For the connections opened from now on (the server was just bound: all of them).
    http2Server.updateSettings({ initialWindowSize: windows.stream });
    http2Server.on('session', (session: ServerHttp2Session) => {
      if (!session.destroyed) session.setLocalWindowSize(windows.connection);
    });
  }
  return http2Servers.size > 0;
}
