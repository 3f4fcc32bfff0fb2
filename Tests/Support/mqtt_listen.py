#!/usr/bin/env python3
"""An MQTT client independent of the NVR (paho-mqtt, from PyPI): subscribes to every topic on
a broker and appends each message it gets to a file as one JSON line {time, topic, retain,
text, bytes}; binary payloads (snapshots) are given as their size only. Reconnects by itself
after the broker goes away. A first line with topic "$listener/ready" says it is subscribed."""
import argparse
import json
import time

import paho.mqtt.client as mqtt

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--out", required=True)
args = parser.parse_args()
out = open(args.out, "a", buffering=1)


def write(topic, retain, payload):
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    out.write(json.dumps({"time": time.time(), "topic": topic, "retain": bool(retain), "text": text,
                          "bytes": len(payload)}) + "\n")


def on_connect(client, userdata, flags, reason_code, properties):
    client.subscribe("#", qos=1)


def on_subscribe(client, userdata, mid, reason_codes, properties):
    write("$listener/ready", False, b"")


def on_message(client, userdata, message):
    write(message.topic, message.retain, message.payload)


client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="test-listener")
client.on_connect = on_connect
client.on_subscribe = on_subscribe
client.on_message = on_message
client.reconnect_delay_set(min_delay=1, max_delay=2)
client.connect("127.0.0.1", args.port, keepalive=30)
client.loop_forever(retry_first_connection=True)
