"""A whole KafkaServer in this process, on its own event loop thread.

For tests that must reach inside a running broker (swap a handler, slow a disk
down) while real sockets drive it; tests of a broker as users run it use
tests.support.broker.BrokerProcess instead."""

from __future__ import annotations

import asyncio
import threading

from franz.server.kafka_config import KafkaConfig
from franz.server.kafka_server import KafkaServer

WAIT_S = 30.0


class BrokerOnThread:
    def __init__(self, data_dir, overrides: dict[str, str] | None = None, authorizer=None) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = KafkaServer(KafkaConfig({"node.id": "1", "listeners": "PLAINTEXT://127.0.0.1:0",
                                               "log.dirs": str(data_dir), "log.initial.task.delay.ms": "60000",
                                               **(overrides or {})}), authorizer)
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.call(self.server.startup())
        self.bootstrap = f"127.0.0.1:{self.server.socket_server.bound_endpoints[0].port}"

    def call(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(WAIT_S)

    def fail(self, api_name: str, exc: Exception) -> None:
        """Make the handler of `api_name` raise `exc` from now on."""
        async def failing(request, body):
            raise exc

        async def swap():
            self.server.apis.register(api_name, failing)
        self.call(swap())

    def stop(self) -> None:
        try:
            self.call(self.server.shutdown())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(WAIT_S)
            self.loop.close()
