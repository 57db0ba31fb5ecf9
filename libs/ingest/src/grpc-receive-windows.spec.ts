import { Server } from '@grpc/grpc-js';
import { createServer } from 'node:http2';
import { openReceiveWindows, receiveWindowsFor } from './grpc-receive-windows';

describe('receiveWindowsFor', () => {
  it('fits a whole request in a call and at least 4 MiB in a connection', () => {
    expect(receiveWindowsFor(256 * 1024)).toEqual({ stream: 256 * 1024, connection: 4 << 20 });
    expect(receiveWindowsFor(4 << 20)).toEqual({ stream: 4 << 20, connection: 4 << 20 });
  });
});

describe('openReceiveWindows', () => {
  it('answers false when it finds no HTTP/2 server (not bound yet, or a grpc-js that keeps them elsewhere)', () => {
    expect(openReceiveWindows(new Server(), receiveWindowsFor(1024))).toBe(false);
    expect(openReceiveWindows({} as Server, receiveWindowsFor(1024))).toBe(false);
  });

  it("raises each new connection's window (the call window a client sees is in the gRPC tests)", () => {
    const http2Server = createServer();
    const server = { http2Servers: new Map([[http2Server, {}]]) } as unknown as Server;
    expect(openReceiveWindows(server, { stream: 300_000, connection: 5_000_000 })).toBe(true);
    const session = { destroyed: false, setLocalWindowSize: jest.fn() };
    http2Server.emit('session', session);
    expect(session.setLocalWindowSize).toHaveBeenCalledWith(5_000_000);
  });
});
