#!/usr/bin/env python3
"""A TCP proxy on loopback that a test can cut like a network: SIGUSR1 blackholes it (bytes
are neither forwarded nor refused, connections stay open, new ones hang, as across a dead
switch), SIGUSR2 mends it (waiting bytes flow again). Prints "READY <port>", then runs until killed.

    tcp_proxy.py --target 127.0.0.1:5432 [--port 0]
"""
import argparse
import asyncio
import signal
import sys


async def main():
    # A parent thread may have started us with these blocked.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM})
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True)
    p.add_argument("--port", type=int, default=0)
    a = p.parse_args()
    host, port = a.target.rsplit(":", 1)
    flowing = asyncio.Event()
    flowing.set()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, flowing.clear)
    loop.add_signal_handler(signal.SIGUSR2, flowing.set)

    async def pipe(reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                await flowing.wait()
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def client(reader, writer):
        await flowing.wait()
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    server = await asyncio.start_server(client, "127.0.0.1", a.port)
    print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
