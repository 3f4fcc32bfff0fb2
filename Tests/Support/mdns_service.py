#!/usr/bin/env python3
"""Announces one DNS-SD service by mDNS with python-zeroconf, as a device on the LAN does:
the GoPro simulator's `<serial>._gopro-web._tcp.local.` in the discovery tests. zeroconf is an
independent mDNS implementation (PyPI), so the NVR's querier is checked against a real
responder, not one of ours. Prints "READY" once registered; runs until SIGTERM.

    mdns_service.py --type _gopro-web._tcp.local. --name C3501324500789 --address 10.211.7.2 --port 8080
"""
import argparse
import signal
import socket
import sys
import threading

from zeroconf import IPVersion, ServiceInfo, Zeroconf


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--type", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--address", required=True)
    p.add_argument("--port", type=int, required=True)
    a = p.parse_args()
    # A child spawned from a worker thread of the test runner inherits SIGTERM blocked.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    info = ServiceInfo(a.type, f"{a.name}.{a.type}", addresses=[socket.inet_aton(a.address)], port=a.port,
                       server=f"{a.name}.local.", properties={})
    zc = Zeroconf(interfaces=[a.address], ip_version=IPVersion.V4Only)
    zc.register_service(info)
    print("READY", flush=True)
    done.wait()
    zc.unregister_service(info)
    zc.close()


if __name__ == "__main__":
    sys.exit(main())
