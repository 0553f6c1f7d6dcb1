"""UpdateFeatures: the finalized feature levels as the controller changes them
(org.apache.kafka.controller.FeatureControlManager and QuorumController.updateFeatures).

An update is checked as Kafka 4.3 checks it, feature by feature, and the first
refusal refuses the whole request (INVALID_UPDATE_VERSION):

- the upgrade type must be one Kafka knows (1 upgrade, 2 safe downgrade,
  3 unsafe downgrade). At v0 it is the field's default, 1, whatever
  AllowDowngrade says: the 4.3 controller reads the field and not the flag;
- the level must be 0 or more, and within what franz supports (a feature
  franz lacks is supported at 0 only);
- a lower level needs a downgrade type, a higher one the upgrade type;
- a level of 0 turns the feature off (no longer finalized).

The features franz has depend on no other feature but metadata.version, which
franz does not keep (it has no KRaft quorum) and so counts as met; updating
metadata.version or kraft.version is refused as a feature franz lacks. So is
`kafka-features.sh upgrade --release-version` (or `--metadata`): it sends
metadata.version, and streams.version and eligible.leader.replicas.version
above 0, none of which franz has; `--feature name=level` works.

The levels and their epoch live in `features.json` in the first log dir,
replaced atomically (the controller's config writer) before the client is
answered, so a restart has them; they take effect from the answer on, in
ApiVersions and in the APIs they turn on and off (franz.server.broker_features).
ValidateOnly (v1+) checks and changes nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from franz.protocol.errors import Errors, default_message
from franz.server.auth_helper import ALTER, AuthHelper
from franz.server.broker_features import SUPPORTED_FEATURES, FinalizedFeatures
from franz.server.cluster_authorization import authorize_cluster_operation
from franz.server.controller import ApiError

FEATURES_FILE: Final = "features.json"
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
# Kafka 4.3's features (Feature.TEST_AND_PRODUCTION_FEATURES and metadata.version): a name outside
# them is not a feature at all, one inside that franz lacks is a feature franz does not support.
KAFKA_FEATURES: Final = frozenset(("metadata.version", "kraft.version", "transaction.version", "group.version",
                                   "eligible.leader.replicas.version", "share.version", "streams.version",
                                   "test.feature.version"))
# Kept only by a KRaft quorum's controller (FeatureControlManager.updateMetadataVersion, the raft client).
QUORUM_FEATURES: Final = frozenset(("metadata.version", "kraft.version"))

logger = logging.getLogger(__name__)

Writer = Callable[[Path, object], Awaitable[None]]


class InvalidUpdateVersion(Exception):
    """FeatureControlManager.invalidUpdateVersion."""

    def __init__(self, feature: str, level: int, reason: str) -> None:
        super().__init__(f"Invalid update version {level} for feature {feature}. {reason}")


class FeatureControlManager:
    def __init__(self, path: Path, write: Writer, features: FinalizedFeatures, node_id: int) -> None:
        self.path = path
        self._write = write
        self.auth = AuthHelper()  # the broker's, once registered
        self.features = features
        self.node_id = node_id
        self._updating = asyncio.Lock()  # one update at a time: each is checked against the last one's levels
        # feature name -> told its new level when it changes (BrokerMetadataPublisher's toggles)
        self.level_listeners: dict[str, list[Callable[[int], None]]] = {}
        self._read()

    def register(self, apis) -> None:
        self.auth = apis.auth
        apis.register("UpdateFeatures", self.handle_update_features)

    # -- storage ---------------------------------------------------------------

    def _read(self) -> None:
        """The stored levels over the bootstrap ones; a file that cannot be read, or that finalizes
        a level franz does not support, is reported and left out, as the other controller files are."""
        if not self.path.exists():
            return  # a new node: the bootstrap levels
        try:
            stored = json.loads(self.path.read_text(encoding="utf-8"))
            levels = {str(name): int(level) for name, level in stored["levels"].items()}
            epoch = int(stored["epoch"])
            for name, level in levels.items():
                low, high = SUPPORTED_FEATURES.get(name, (0, 0))
                if not low <= level <= high:
                    raise ValueError(f"{name} at level {level}, where this broker supports {low}-{high}")
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            logger.warning("Ignoring unreadable %s: %s", self.path, exc)
            return
        self.features.levels = {name: level for name, level in levels.items() if level > 0}
        self.features.epoch = epoch

    # -- UpdateFeatures --------------------------------------------------------

    async def handle_update_features(self, request, body: dict) -> dict:
        authorize_cluster_operation(self.auth, request, ALTER)  # ControllerApis, before anything else
        # QuorumController.updateFeatures: by name, the last update of a name winning.
        updates = {update["feature"]: (update["max_version_level"], update["upgrade_type"])
                   for update in body["feature_updates"]}
        async with self._updating:
            proposed = dict(self.features.levels)
            try:
                for name, (level, upgrade_type) in updates.items():
                    self._check(name, level, upgrade_type)
                    if name in SUPPORTED_FEATURES:
                        proposed[name] = level
            except InvalidUpdateVersion as exc:
                logger.warning("%s", exc)
                return {"throttle_time_ms": 0, "error_code": Errors.INVALID_UPDATE_VERSION,
                        "error_message": f"The update failed for all features since the following feature had "
                                         f"an error: {exc}", "results": []}
            if not body["validate_only"] and updates:
                levels = {name: level for name, level in proposed.items() if level > 0}
                epoch = self.features.epoch + 1
                try:
                    await self._write(self.path, {"epoch": epoch, "levels": levels})  # stored before in force
                except ApiError as exc:  # nothing was finalized
                    return {"throttle_time_ms": 0, "error_code": exc.code, "error_message": exc.message,
                            "results": []}
                before = self.features.levels
                self.features.levels, self.features.epoch = levels, epoch
                logger.info("Finalized features updated to %s (epoch %d)", levels, epoch)
                for name, listeners in self.level_listeners.items():
                    if levels.get(name, 0) != before.get(name, 0):
                        for listener in listeners:
                            listener(levels.get(name, 0))
        # Up to v1 each update has its result, whose message is Errors.NONE.message(): "NONE".
        results = [{"feature": update["feature"], "error_code": Errors.NONE,
                    "error_message": default_message(Errors.NONE)}
                   for update in body["feature_updates"]]
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "error_message": None,
                "results": results if request.api_version <= 1 else []}

    def _check(self, name: str, level: int, upgrade_type: int) -> None:
        """FeatureControlManager.updateFeature's checks of one update, in its order."""
        if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            raise InvalidUpdateVersion(name, level, "The controller does not support the given upgrade type.")
        if level < 0:
            raise InvalidUpdateVersion(name, level, "A feature version cannot be less than 0.")
        low, high = (0, 0) if name in QUORUM_FEATURES else SUPPORTED_FEATURES.get(name, (0, 0))
        if not low <= level <= high or name in QUORUM_FEATURES:
            what = f"Local controller {self.node_id}"
            raise InvalidUpdateVersion(name, level, f"{what} does not support this feature." if high == 0
                                       else f"{what} only supports versions {_version_range(low, high)}")
        current = self.features.level(name)
        if level < current and upgrade_type == UPGRADE:
            raise InvalidUpdateVersion(name, level, "Can't downgrade the version of this feature without setting the "
                                                    "upgrade type to either safe or unsafe downgrade.")
        if level > current and upgrade_type != UPGRADE:
            raise InvalidUpdateVersion(name, level, "Can't downgrade to a newer version.")
        if name not in KAFKA_FEATURES:
            raise InvalidUpdateVersion(name, level, f"Feature {name} not found.")


def _version_range(low: int, high: int) -> str:
    """VersionRange.toString."""
    return str(low) if low == high else f"{low}-{high}"
