"""A small freedesktop notification server for Chime's desktop tests.

It owns org.freedesktop.Notifications on the bus given with --address, advertises the capabilities
given with --capabilities (KDE's "inline-reply" among them when asked), and reports every call it
receives as one JSON line on standard output. Lines on standard input make it act as a user would:

    {"cmd": "invoke", "id": 3, "key": "snooze", "token": "abc"}   ActivationToken (if token), ActionInvoked
    {"cmd": "reply", "id": 3, "text": "on my way"}                 NotificationReplied
    {"cmd": "closed", "id": 3, "reason": 2}                        NotificationClosed
    {"cmd": "spoof", "id": 3, "key": "snooze"}                     ActionInvoked from another connection
    {"cmd": "refuse", "on": true}                                  answer Notify with an error from now on
    {"cmd": "quit"}

Signals go to the connection that called Notify (as dunst sends them) or, with --broadcast, to
everyone (as KDE Plasma does). Output lines: {"event": "ready"}, {"event": "notify", ...},
{"event": "close", "id": N}, {"event": "done", "cmd": ...} after each command.
"""

import argparse
import asyncio
import json
import sys

from dbus_next import Message, MessageType, Variant
from dbus_next.aio import MessageBus
from dbus_next.constants import RequestNameReply
from dbus_next.errors import DBusError
from dbus_next.service import ServiceInterface, method

PATH = "/org/freedesktop/Notifications"
INTERFACE = "org.freedesktop.Notifications"


def emit(event):
    sys.stdout.write(json.dumps(event, sort_keys=True) + "\n")
    sys.stdout.flush()


def plain(value):
    """A hint's value as JSON: [signature, value]."""
    if isinstance(value, Variant):
        inner = value.value
        if isinstance(inner, (bytes, bytearray)):
            inner = list(inner)
        return [value.signature, inner]
    return ["?", repr(value)]


class Server(ServiceInterface):
    def __init__(self, options, bus):
        super().__init__(INTERFACE)
        self.options = options
        self.bus = bus
        self.next_id = 1
        self.senders = {}
        self.refusing = False

    @method()
    def GetCapabilities(self) -> "as":
        return [c for c in self.options.capabilities.split(",") if c]

    @method()
    def GetServerInformation(self) -> "ssss":
        return [self.options.server_name, "chime-tests", "1.0", "1.2"]

    @method()
    def Notify(self, app_name: "s", replaces_id: "u", app_icon: "s", summary: "s", body: "s",
               actions: "as", hints: "a{sv}", expire_timeout: "i") -> "u":
        if self.refusing:
            raise DBusError("org.freedesktop.Notifications.Error.Refused", "this server refuses notifications now")
        if replaces_id and replaces_id in self.senders:
            identifier = replaces_id
        else:
            identifier = self.next_id
            self.next_id += 1
        # dbus-next does not hand the sender to a method; a message handler noted it just before.
        self.senders[identifier] = self.current_sender
        emit({"event": "notify", "id": identifier, "app_name": app_name, "replaces_id": replaces_id, "app_icon": app_icon,
              "summary": summary, "body": body, "actions": list(actions),
              "hints": {key: plain(value) for key, value in hints.items()}, "expire_timeout": expire_timeout,
              "sender": self.current_sender})
        return identifier

    @method()
    def CloseNotification(self, identifier: "u"):
        emit({"event": "close", "id": identifier})
        if identifier in self.senders:
            self.signal(identifier, "NotificationClosed", "uu", [identifier, 3])

    def signal(self, identifier, member, signature, body, bus=None):
        destination = None if self.options.broadcast else self.senders.get(identifier)
        message = Message(message_type=MessageType.SIGNAL, destination=destination, path=PATH, interface=INTERFACE,
                          member=member, signature=signature, body=body)
        (bus or self.bus).send(message)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--capabilities", default="actions,body,body-markup,inline-reply")
    parser.add_argument("--server-name", default="chime-test-server")
    parser.add_argument("--broadcast", action="store_true")
    options = parser.parse_args()

    bus = await MessageBus(bus_address=options.address).connect()
    server = Server(options, bus)
    server.current_sender = None

    def remember_sender(message):
        if message.message_type == MessageType.METHOD_CALL and message.member == "Notify":
            server.current_sender = message.sender
        return None

    # Message handlers run before the exported interface's methods, so Notify knows who called.
    bus.add_message_handler(remember_sender)
    bus.export(PATH, server)
    reply = await bus.request_name("org.freedesktop.Notifications")
    if reply != RequestNameReply.PRIMARY_OWNER:
        emit({"event": "error", "message": f"could not own the name: {reply}"})
        return
    spoofer = await MessageBus(bus_address=options.address).connect()
    emit({"event": "ready", "unique_name": bus.unique_name})

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = await reader.readline()
        if not line:
            break
        command = json.loads(line)
        kind = command["cmd"]
        if kind == "quit":
            break
        if kind == "invoke":
            if command.get("token"):
                server.signal(command["id"], "ActivationToken", "us", [command["id"], command["token"]])
            server.signal(command["id"], "ActionInvoked", "us", [command["id"], command["key"]])
        elif kind == "reply":
            server.signal(command["id"], "NotificationReplied", "us", [command["id"], command["text"]])
        elif kind == "closed":
            server.signal(command["id"], "NotificationClosed", "uu", [command["id"], command["reason"]])
        elif kind == "spoof":
            server.signal(command["id"], "ActionInvoked", "us", [command["id"], command["key"]], bus=spoofer)
        elif kind == "refuse":
            server.refusing = bool(command["on"])
        emit({"event": "done", "cmd": kind})
    bus.disconnect()
    spoofer.disconnect()


if __name__ == "__main__":
    asyncio.run(main())
