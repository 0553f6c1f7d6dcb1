"""The broker's loggers and their levels at run time (org.apache.kafka.server.logger.LoggingController).

What DescribeConfigs and IncrementalAlterConfigs of a BROKER_LOGGER resource
read and change (`kafka-configs.sh --entity-type broker-loggers`): every
logger that exists, by name, with its effective level in log4j's names. The
root logger is "root". Python's levels map onto log4j's: CRITICAL is FATAL,
WARNING is WARN, and TRACE (which Python lacks) is level 5, below DEBUG.
"""

from __future__ import annotations

import logging
from typing import Final

ROOT_LOGGER: Final = "root"
TRACE: Final = 5
# Kafka's LogLevelConfig.VALID_LOG_LEVELS, strongest first.
LEVELS: Final[dict[str, int]] = {"FATAL": logging.CRITICAL, "ERROR": logging.ERROR, "WARN": logging.WARNING,
                                 "INFO": logging.INFO, "DEBUG": logging.DEBUG, "TRACE": TRACE}


def level_name(level: int) -> str:
    """The log4j name of a Python level: the weakest named level at or above it."""
    for name, value in reversed(LEVELS.items()):
        if level <= value:
            return name
    return "FATAL"


def _logger(name: str) -> logging.Logger | None:
    if name == ROOT_LOGGER:
        return logging.getLogger()
    found = logging.Logger.manager.loggerDict.get(name)
    return found if isinstance(found, logging.Logger) else None  # a PlaceHolder is no logger yet


def loggers() -> dict[str, str]:
    """Every existing logger and its effective level, root first."""
    named = {ROOT_LOGGER: level_name(logging.getLogger().getEffectiveLevel())}
    for name in sorted(logging.Logger.manager.loggerDict):
        found = _logger(name)
        if found is not None:
            named[name] = level_name(found.getEffectiveLevel())
    return named


def logger_exists(name: str) -> bool:
    return _logger(name) is not None


def set_level(name: str, level: str) -> None:
    found = _logger(name)
    assert found is not None and level in LEVELS, (name, level)
    found.setLevel(LEVELS[level])


def unset_level(name: str) -> None:
    """The logger takes its parent's level again (log4j's level null)."""
    found = _logger(name)
    assert found is not None and name != ROOT_LOGGER, name
    found.setLevel(logging.NOTSET)
